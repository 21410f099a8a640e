/**
 * The code editor, loaded when a page first shows one: CodeMirror is most of the app's code, and
 * the pages that only read need none of it (docs/app.md gives the sizes).
 */
import { lazy, Suspense } from 'react';
import type { CodeEditorProps } from './CodeEditor.js';

const CodeEditor = lazy<(props: CodeEditorProps) => JSX.Element>(() =>
  import('./CodeEditor.js').then((m) => ({ default: m.CodeEditor })),
);

export function Editor(props: CodeEditorProps) {
  return (
    <Suspense fallback={<p role="status">Loading the editor…</p>}>
      <CodeEditor {...props} />
    </Suspense>
  );
}
