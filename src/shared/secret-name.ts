/**
 * Which names hold secrets: a definition's literal under such a name draws a warning, and a value
 * under such a key is hidden from every log line. One rule for both, so that what the checker asks to
 * move into the environment is also what the logs never show. Pure.
 */

// PASS alone only as a whole word (DB_PASS, not COMPASS or PASSENGER); the rest anywhere in the name.
const SECRET_NAME =
  /TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|(?<![A-Z])PASS(?![A-Z])|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CREDENTIAL|AUTHORI[SZ]ATION|COOKIE|SESSION/i;

/** True when `name` (an environment variable, a header, a field) names a secret: `API_KEY`, `Authorization`, `sessionId`. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * True when a secret's name may occur anywhere in `text` (a JSON text, say): false means no key in it
 * names a secret, as every key is a part of the text.
 */
export function mayNameSecret(text: string): boolean {
  return SECRET_NAME.test(text);
}
