/** Small pieces every page uses: state badges, errors, copy buttons, loading text. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api.js';

const STATE_KIND: Record<string, string> = {
  deployed: 'ok',
  healthy: 'ok',
  running: 'ok',
  firing: 'bad',
  failed: 'bad',
  unhealthy: 'bad',
  deploying: 'busy',
  starting: 'busy',
  restarting: 'busy',
  pending: 'warn',
  stopped: 'off',
  resolved: 'off',
};

/** A state as a coloured badge that also says the state in words (colour is never the only sign). */
export function Badge({ state, kind }: { state: string; kind?: string }) {
  return <span class={`badge badge-${kind ?? STATE_KIND[state] ?? 'off'}`}>{state}</span>;
}

/** An error as the service worded it, with its hint. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  const { message, hint } = describeError(error);
  return (
    <div class="error" role="alert">
      {title === undefined ? null : <strong>{title}: </strong>}
      {message}
      {hint === undefined ? null : <div class="hint">{hint}</div>}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return <p class="muted">Loading {what}…</p>;
}

/** A button that copies `text` and says so for a moment. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | undefined>(undefined);
  useEffect(() => {
    if (copied === undefined) return undefined;
    const timer = setTimeout(() => setCopied(undefined), 1500);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = (): void => {
    // the clipboard needs a secure context (HTTPS or loopback); elsewhere the URL stays selectable
    if (navigator.clipboard === undefined) {
      setCopied('no');
      return;
    }
    navigator.clipboard.writeText(text).then(
      () => setCopied('yes'),
      () => setCopied('no'),
    );
  };
  return (
    <button type="button" class="small" onClick={copy} aria-label={label}>
      {copied === 'yes' ? 'Copied' : copied === 'no' ? 'Select and copy' : 'Copy'}
    </button>
  );
}

/** A titled block of a page. */
export function Section({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section class="card">
      <div class="card-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** A table that scrolls sideways on a narrow screen instead of overflowing the page. */
export function TableWrap({ children, label }: { children: ComponentChildren; label: string }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table>{children}</table>
    </div>
  );
}
