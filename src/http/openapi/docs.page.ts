/**
 * The interactive API page: plain HTML and a little inline script that reads /api/docs/openapi.json,
 * lists operations by tag and sends requests with a bearer token. Nothing is fetched from elsewhere.
 */
export const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>API reference</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1rem;color:#222}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem}
details{border:1px solid #ddd;border-radius:4px;margin:.4rem 0;padding:.3rem .6rem}
summary{cursor:pointer}.m{display:inline-block;width:3.5rem;font-weight:bold;text-transform:uppercase}
.get{color:#0a6}.post{color:#06c}pre{background:#f6f6f6;padding:.5rem;overflow:auto;max-height:20rem}
input,textarea{font:inherit;width:100%;box-sizing:border-box}label{display:block;margin:.3rem 0}
</style></head><body>
<h1>API reference</h1>
<p>Send requests to this tenant host. Token: <input id="token" placeholder="Bearer access token"></p>
<div id="ops">Loading…</div>
<script>
const el = (t, a = {}, ...kids) => { const e = document.createElement(t); Object.assign(e, a); e.append(...kids); return e; };
async function main() {
  const doc = await (await fetch('/api/docs/openapi.json')).json();
  const root = document.getElementById('ops'); root.textContent = '';
  const byTag = {};
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) (byTag[op.tags[0]] ??= []).push({ path, method, op });
  for (const [tag, list] of Object.entries(byTag)) {
    root.append(el('h2', { textContent: tag }));
    for (const { path, method, op } of list) root.append(operation(path, method, op));
  }
}
function operation(path, method, op) {
  const inputs = {};
  const form = el('div');
  for (const p of op.parameters ?? []) { inputs[p.name] = el('input', { placeholder: p.in + (p.required ? ' (required)' : '') }); form.append(el('label', { textContent: p.name }, inputs[p.name])); }
  const json = op.requestBody?.content?.['application/json'];
  const body = json ? el('textarea', { rows: 6, placeholder: JSON.stringify(json.schema.properties ?? {}, null, 1) }) : null;
  if (body) form.append(el('label', { textContent: 'JSON body' }, body));
  const out = el('pre');
  const send = el('button', { textContent: 'Send', onclick: async () => {
    let url = path; const q = new URLSearchParams();
    for (const p of op.parameters ?? []) { const v = inputs[p.name].value; if (!v) continue; if (p.in === 'path') url = url.replace('{' + p.name + '}', encodeURIComponent(v)); else q.set(p.name, v); }
    const headers = {}; const token = document.getElementById('token').value.trim();
    if (token) headers.authorization = 'Bearer ' + token.replace(/^Bearer\\s+/i, '');
    if (body) headers['content-type'] = 'application/json';
    const res = await fetch(url + (q.size ? '?' + q : ''), { method: method.toUpperCase(), headers, body: body?.value || undefined });
    out.textContent = res.status + ' ' + res.statusText + '\\n' + await res.text();
  } });
  const schema = el('pre', { textContent: JSON.stringify(op.responses['200'].content['application/json'].schema, null, 2) });
  return el('details', {}, el('summary', {}, el('span', { className: 'm ' + method, textContent: method }), path + ' · ' + op.summary),
    el('p', { textContent: op.description ?? '' }), form, send, out, el('h4', { textContent: 'Response 200' }), schema);
}
main().catch((e) => { document.getElementById('ops').textContent = 'Failed to load: ' + e; });
</script></body></html>`;
