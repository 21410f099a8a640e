/**
 * The web app's one HTML page, answered for every address under /app (the app reads the address
 * itself). It loads the built script and style sheet by their hashed names; everything else the
 * app needs comes from this server too.
 */

export interface AppPageAssets {
  readonly script: string;
  readonly style: string;
}

export function appPage({ script, style }: AppPageAssets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Graphir</title>
<link rel="stylesheet" href="${style}">
<script type="module" src="${script}"></script>
</head>
<body>
<div id="root"><noscript>The Graphir web app needs JavaScript.</noscript></div>
</body>
</html>
`;
}
