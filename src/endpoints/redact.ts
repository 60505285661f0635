/** Redaction of URL credentials, query strings and secrets before anything is echoed or stored. */

/** Drops userinfo and query string (where keys hide) from a URL. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return '[invalid url]';
  }
}

/** Redacts anything URL-shaped inside free text (used before echoing user input in an error). */
export function redactText(text: string): string {
  return text.replace(/https?:\/\/[^\s,#]+/g, (m) => redactUrl(m));
}

/**
 * Removes every occurrence of each secret from a message. Applied to every error message and identity
 * that may carry server-echoed text.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}
