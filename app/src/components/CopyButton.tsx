/** Copies a text to the clipboard, and says so. */
import { useState } from 'react';

export function CopyButton({ text, label }: { readonly text: string; readonly label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <>
      <button type="button" className="small" onClick={() => void copy()}>
        {label}
      </button>
      <span className="copy-state" role="status">
        {state === 'copied'
          ? 'Copied'
          : state === 'failed'
            ? 'Could not copy: select the text'
            : ''}
      </span>
    </>
  );
}
