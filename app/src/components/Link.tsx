/** A link within the app: followed without reloading the page, unless opened elsewhere. */
import type { ReactNode } from 'react';
import { useApp } from '../lib/app-context.js';

export interface LinkProps {
  readonly href: string;
  readonly children?: ReactNode;
  readonly className?: string;
  readonly current?: boolean;
}

export function Link({ href, children, className, current }: LinkProps) {
  const { navigate } = useApp();
  return (
    <a
      href={href}
      className={className}
      aria-current={current ? 'page' : undefined}
      onClick={(event) => {
        const click = event.nativeEvent as MouseEvent;
        if (click.button !== 0 || click.metaKey || click.ctrlKey || click.shiftKey || click.altKey)
          return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
