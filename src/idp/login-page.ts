const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Escapes text for HTML content and attribute values (the realm's pages). */
export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESC[c]!);

/** The embedded realm's sign-in form (no scripts, so any client, browser or test, can post it). */
export function loginPage(p: { action: string; tenant: string; error?: string; username?: string }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in - ${esc(p.tenant)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"></head>
<body><main><h1>Sign in to ${esc(p.tenant)}</h1>
${p.error ? `<p role="alert">${esc(p.error)}</p>` : ''}
<form method="post" action="${esc(p.action)}">
<label>Username <input name="username" autocomplete="username" required value="${esc(p.username ?? '')}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form></main></body></html>`;
}
