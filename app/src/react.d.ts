/**
 * Types for the part of React 18's API the app uses. The project ships React for GraphiQL
 * without `@types/react`; these declarations describe the same calls, so the app can move to the
 * published types by deleting this file.
 */
declare module 'react' {
  export interface ReactElement {
    readonly type: unknown;
    readonly props: unknown;
    readonly key: string | null;
  }
  export type ReactNode =
    ReactElement | string | number | boolean | null | undefined | readonly ReactNode[];
  export type SetStateAction<T> = T | ((previous: T) => T);
  export type Dispatch<A> = (action: A) => void;
  export interface MutableRefObject<T> {
    current: T;
  }
  export interface RefObject<T> {
    readonly current: T | null;
  }
  export interface Context<T> {
    readonly Provider: (props: { value: T; children?: ReactNode }) => ReactNode;
  }
  export type DependencyList = readonly unknown[];

  export function useState<T>(initial: T | (() => T)): [T, Dispatch<SetStateAction<T>>];
  export function useState<T = undefined>(): [
    T | undefined,
    Dispatch<SetStateAction<T | undefined>>,
  ];
  export function useEffect(effect: () => void | (() => void), deps?: DependencyList): void;
  export function useLayoutEffect(effect: () => void | (() => void), deps?: DependencyList): void;
  export function useMemo<T>(factory: () => T, deps: DependencyList): T;
  export function useCallback<T extends (...args: never[]) => unknown>(
    callback: T,
    deps: DependencyList,
  ): T;
  export function useRef<T>(initial: T): MutableRefObject<T>;
  export function useRef<T>(initial: T | null): RefObject<T>;
  export function useId(): string;
  export function createContext<T>(defaultValue: T): Context<T>;
  export function useContext<T>(context: Context<T>): T;
  export function lazy<P>(
    load: () => Promise<{ default: (props: P) => ReactNode }>,
  ): (props: P) => ReactNode;
  export const Suspense: (props: { fallback?: ReactNode; children?: ReactNode }) => ReactNode;
  export const StrictMode: (props: { children?: ReactNode }) => ReactNode;
  export const Fragment: (props: { children?: ReactNode }) => ReactNode;
}

declare module 'react-dom/client' {
  import type { ReactNode } from 'react';
  export interface Root {
    render(children: ReactNode): void;
    unmount(): void;
  }
  export function createRoot(container: Element): Root;
}

declare module 'react/jsx-runtime' {
  import type { ReactElement, ReactNode, RefObject } from 'react';

  /** An event as React hands it to a handler: the element the handler is on, typed by tag. */
  interface SyntheticEvent<E extends Element, N extends Event = Event> {
    readonly currentTarget: E;
    readonly target: EventTarget;
    readonly nativeEvent: N;
    preventDefault(): void;
    stopPropagation(): void;
  }
  type KeyboardHandler<E extends Element> = (
    event: SyntheticEvent<E, KeyboardEvent> & { readonly key: string },
  ) => void;
  type Handler<E extends Element> = (event: SyntheticEvent<E>) => void;

  interface ElementProps<E extends Element> {
    key?: string | number;
    ref?: RefObject<E> | ((element: E | null) => void);
    children?: ReactNode;
    id?: string;
    className?: string;
    style?: Record<string, string | number>;
    title?: string;
    role?: string;
    tabIndex?: number;
    hidden?: boolean;
    lang?: string;
    dangerouslySetInnerHTML?: never;
    onClick?: Handler<E>;
    onChange?: Handler<E>;
    onInput?: Handler<E>;
    onSubmit?: Handler<E>;
    onKeyDown?: KeyboardHandler<E>;
    onFocus?: Handler<E>;
    onBlur?: Handler<E>;
    [aria: `aria-${string}`]: string | number | boolean | undefined;
    [data: `data-${string}`]: string | number | boolean | undefined;
  }
  interface FormControlProps<E extends Element> extends ElementProps<E> {
    name?: string;
    value?: string | number;
    defaultValue?: string;
    disabled?: boolean;
    required?: boolean;
    readOnly?: boolean;
    placeholder?: string;
    autoComplete?: string;
    autoFocus?: boolean;
    spellCheck?: boolean;
  }
  interface InputProps extends FormControlProps<HTMLInputElement> {
    type?: string;
    checked?: boolean;
    min?: number | string;
    max?: number | string;
  }
  interface TextAreaProps extends FormControlProps<HTMLTextAreaElement> {
    rows?: number;
  }
  interface ButtonProps extends ElementProps<HTMLButtonElement> {
    type?: 'button' | 'submit' | 'reset';
    disabled?: boolean;
    autoFocus?: boolean;
  }
  interface AnchorProps extends ElementProps<HTMLAnchorElement> {
    href?: string;
    target?: string;
    rel?: string;
  }
  interface LabelProps extends ElementProps<HTMLLabelElement> {
    htmlFor?: string;
  }
  interface FormProps extends ElementProps<HTMLFormElement> {
    noValidate?: boolean;
    autoComplete?: string;
  }
  interface TableCellProps extends ElementProps<HTMLTableCellElement> {
    scope?: string;
    colSpan?: number;
  }
  interface TimeProps extends ElementProps<HTMLTimeElement> {
    dateTime?: string;
  }
  interface OListProps extends ElementProps<HTMLOListElement> {
    start?: number;
  }

  export namespace JSX {
    type Element = ReactElement;
    type ElementType = string | ((props: never) => ReactNode);
    interface ElementChildrenAttribute {
      children: unknown;
    }
    interface IntrinsicAttributes {
      key?: string | number;
    }
    interface IntrinsicElements {
      a: AnchorProps;
      button: ButtonProps;
      input: InputProps;
      textarea: TextAreaProps;
      select: FormControlProps<HTMLSelectElement>;
      option: FormControlProps<HTMLOptionElement>;
      label: LabelProps;
      form: FormProps;
      fieldset: ElementProps<HTMLFieldSetElement>;
      legend: ElementProps<HTMLLegendElement>;
      th: TableCellProps;
      td: TableCellProps;
      time: TimeProps;
      ol: OListProps;
      div: ElementProps<HTMLElement>;
      span: ElementProps<HTMLElement>;
      main: ElementProps<HTMLElement>;
      nav: ElementProps<HTMLElement>;
      header: ElementProps<HTMLElement>;
      footer: ElementProps<HTMLElement>;
      section: ElementProps<HTMLElement>;
      article: ElementProps<HTMLElement>;
      aside: ElementProps<HTMLElement>;
      h1: ElementProps<HTMLElement>;
      h2: ElementProps<HTMLElement>;
      h3: ElementProps<HTMLElement>;
      h4: ElementProps<HTMLElement>;
      p: ElementProps<HTMLElement>;
      ul: ElementProps<HTMLElement>;
      li: ElementProps<HTMLElement>;
      dl: ElementProps<HTMLElement>;
      dt: ElementProps<HTMLElement>;
      dd: ElementProps<HTMLElement>;
      table: ElementProps<HTMLElement>;
      thead: ElementProps<HTMLElement>;
      tbody: ElementProps<HTMLElement>;
      tr: ElementProps<HTMLElement>;
      caption: ElementProps<HTMLElement>;
      pre: ElementProps<HTMLElement>;
      code: ElementProps<HTMLElement>;
      strong: ElementProps<HTMLElement>;
      em: ElementProps<HTMLElement>;
      small: ElementProps<HTMLElement>;
      details: ElementProps<HTMLElement>;
      summary: ElementProps<HTMLElement>;
      output: ElementProps<HTMLElement>;
      kbd: ElementProps<HTMLElement>;
    }
  }
  export function jsx(type: unknown, props: unknown, key?: string): ReactElement;
  export function jsxs(type: unknown, props: unknown, key?: string): ReactElement;
  export const Fragment: unknown;
}
