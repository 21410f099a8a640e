/**
 * A CodeMirror 6 editor for JSON, JavaScript or TypeScript, or plain text. The parent reads its
 * text through `onChange` and may mark lines (validation errors) and move the cursor to one.
 * Tab is left to the browser (no indent-with-Tab), so the keyboard can leave the editor.
 */
import { useEffect, useRef } from 'react';
import { basicSetup } from 'codemirror';
import { json } from '@codemirror/lang-json';
import { javascript } from '@codemirror/lang-javascript';
import {
  Compartment,
  EditorSelection,
  EditorState,
  StateEffect,
  StateField,
} from '@codemirror/state';
import { Decoration, EditorView, type DecorationSet } from '@codemirror/view';

export type EditorLanguage = 'json' | 'javascript' | 'typescript' | 'text';

export interface LineMark {
  /** 1-based. */
  readonly line: number;
  readonly message: string;
}

export interface CodeEditorProps {
  /** The text it starts with; later changes come from the user (remount to replace it). */
  readonly initial: string;
  readonly onChange: (text: string) => void;
  readonly language: EditorLanguage;
  /** The accessible name of its text area. */
  readonly label: string;
  readonly marks?: readonly LineMark[];
  /** Called once the editor exists, with a way to put the cursor on a line. */
  readonly onReady?: (goToLine: (line: number) => void) => void;
  readonly id?: string;
  readonly readOnly?: boolean;
}

const setMarks = StateEffect.define<readonly LineMark[]>();

const markedLines = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(decorations, transaction) {
    let next = decorations.map(transaction.changes);
    for (const effect of transaction.effects) {
      if (!effect.is(setMarks)) continue;
      const { doc } = transaction.state;
      const ranges = [...effect.value]
        .filter((mark) => mark.line >= 1 && mark.line <= doc.lines)
        .sort((a, b) => a.line - b.line)
        .map((mark) =>
          Decoration.line({ class: 'cm-issue-line', attributes: { title: mark.message } }).range(
            doc.line(mark.line).from,
          ),
        );
      next = Decoration.set(ranges, true);
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

function languageOf(language: EditorLanguage) {
  switch (language) {
    case 'json':
      return json();
    case 'javascript':
      return javascript();
    case 'typescript':
      return javascript({ typescript: true });
    case 'text':
      return [];
  }
}

export function CodeEditor({
  initial,
  onChange,
  language,
  label,
  marks,
  onReady,
  id,
  readOnly = false,
}: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const languageSlot = useRef(new Compartment());
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    const editor = new EditorView({
      parent: host.current!,
      doc: initial,
      extensions: [
        basicSetup,
        languageSlot.current.of(languageOf(language)),
        markedLines,
        EditorView.lineWrapping,
        EditorState.readOnly.of(readOnly),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) changed.current(update.state.doc.toString());
        }),
      ],
    });
    view.current = editor;
    onReady?.((line) => {
      const target = editor.state.doc.line(Math.min(Math.max(line, 1), editor.state.doc.lines));
      editor.dispatch({
        selection: EditorSelection.cursor(target.from),
        effects: EditorView.scrollIntoView(target.from, { y: 'center' }),
      });
      editor.focus();
    });
    return () => {
      editor.destroy();
      view.current = undefined;
    };
    // Made once per mount: the parent remounts the editor to give it another text.
  }, []);

  useEffect(() => {
    view.current?.dispatch({ effects: languageSlot.current.reconfigure(languageOf(language)) });
  }, [language]);

  useEffect(() => {
    view.current?.dispatch({ effects: setMarks.of(marks ?? []) });
  }, [marks]);

  return <div className="code-editor" id={id} ref={host} />;
}
