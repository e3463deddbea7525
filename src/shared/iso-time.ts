/**
 * `new Date(ms).toISOString()` for the times of log lines, written several times per request:
 * the date, hour and minute are formatted once a minute and the seconds added to them, which
 * costs a tenth of building a Date and formatting it each time. Same text, same errors.
 */

let minuteStart = Number.NaN;
let minutePrefix = '';

export function isoTime(ms: number): string {
  const into = ms - minuteStart;
  // Also false for NaN, so anything unusual (a time before the cached minute, an invalid one) is
  // formatted, or refused, by Date itself.
  if (into >= 0 && into < 60_000 && Number.isInteger(ms)) {
    const seconds = Math.floor(into / 1000);
    const millis = into - seconds * 1000;
    return `${minutePrefix}${seconds < 10 ? '0' : ''}${seconds}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
  }
  const text = new Date(ms).toISOString();
  // `YYYY-MM-DDTHH:MM:` of a four-digit year; other years (before 1970, after 9999) are not cached.
  if (text.length === 24 && Number.isInteger(ms) && ms >= 0) {
    minuteStart = ms - (ms % 60_000);
    minutePrefix = text.slice(0, 17);
  }
  return text;
}
