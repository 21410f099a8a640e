/**
 * The GraphQL playground's HTML: GraphiQL (UMD build, on React 18's UMD builds) served by this
 * server, with a field for the access token. The token stays in the tab's sessionStorage, under
 * the key the web app (/app) keeps its sign-in in, so the two pages of a tab share one sign-in;
 * a `#token=…` fragment fills it too (and is then removed from the address bar). Every GraphQL call
 * is a POST to the page's own URL with `Authorization: Bearer <token>`.
 */

export interface PlaygroundAssets {
  readonly react: string;
  readonly reactDom: string;
  readonly graphiqlScript: string;
  readonly graphiqlStyle: string;
}

const DEFAULT_QUERY = `# Graphir GraphQL playground: enter an access token above, then run a query
# (Ctrl-Enter). Ctrl-Space completes field names and arguments.
{
  PatientList(_count: 10) {
    id
    name { family given }
  }
}
`;

/** The page; `assets` are the URLs of the scripts and the style sheet it loads. */
export function playgroundPage(assets: PlaygroundAssets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Graphir GraphQL playground</title>
<link rel="stylesheet" href="${assets.graphiqlStyle}">
<style>
  html, body { height: 100%; margin: 0; }
  body { display: flex; flex-direction: column; font-family: system-ui, sans-serif; }
  #token-bar { display: flex; gap: 8px; align-items: center; padding: 6px 12px;
    border-bottom: 1px solid #ddd; font-size: 14px; }
  #token-bar input { flex: 1; font-family: monospace; padding: 4px 6px; }
  #graphiql { flex: 1; min-height: 0; }
</style>
</head>
<body>
<form id="token-bar" autocomplete="off">
  <label for="token">Access token</label>
  <input id="token" name="token" type="password" placeholder="Bearer token from POST /oauth2/token" spellcheck="false">
  <button type="submit">Use token</button>
  <a href="/app">Web app</a>
</form>
<div id="graphiql">Loading…</div>
<script src="${assets.react}"></script>
<script src="${assets.reactDom}"></script>
<script src="${assets.graphiqlScript}"></script>
<script>
(function () {
  var STORAGE_KEY = 'graphir.token';
  var endpoint = window.location.origin + window.location.pathname;
  var fragment = new URLSearchParams(window.location.hash.slice(1));
  if (fragment.get('token')) {
    sessionStorage.setItem(STORAGE_KEY, fragment.get('token'));
    history.replaceState(null, '', window.location.pathname + window.location.search);
  }
  var input = document.getElementById('token');
  input.value = sessionStorage.getItem(STORAGE_KEY) || '';

  function makeFetcher(token) {
    return async function (params, options) {
      if (!token) return { errors: [{ message: 'Enter an access token above to query the server.' }] };
      var headers = Object.assign(
        { 'Content-Type': 'application/json', Accept: 'application/json' },
        (options && options.headers) || {},
        { Authorization: 'Bearer ' + token }
      );
      var response = await fetch(endpoint, { method: 'POST', headers: headers, body: JSON.stringify(params) });
      var text = await response.text();
      var body;
      try { body = JSON.parse(text); } catch (e) { body = undefined; }
      if (body && (body.data !== undefined || body.errors !== undefined)) return body;
      var detail = body && body.issue && body.issue[0] && body.issue[0].diagnostics;
      return { errors: [{ message: 'HTTP ' + response.status + ': ' + (detail || text) }] };
    };
  }

  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  function render() {
    var token = input.value.trim();
    if (token) sessionStorage.setItem(STORAGE_KEY, token);
    else sessionStorage.removeItem(STORAGE_KEY);
    root.render(React.createElement(GraphiQL, {
      fetcher: makeFetcher(token),
      defaultQuery: ${JSON.stringify(DEFAULT_QUERY).replace(/</g, '\\u003c')},
      shouldPersistHeaders: false
    }));
  }
  document.getElementById('token-bar').addEventListener('submit', function (event) {
    event.preventDefault();
    render();
  });
  render();
})();
</script>
</body>
</html>
`;
}
