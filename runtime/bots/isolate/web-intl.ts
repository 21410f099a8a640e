/**
 * Enough of Intl for the formatting bots do (Medplum's formatDateTime, formatTime…):
 * DateTimeFormat and NumberFormat, each formatted by Node's Intl (ICU) in the worker
 * (isolate/isolate-host.ts `intl`), since QuickJS has no Intl at all.
 */
import type { IsolateHost } from './isolate-host.js';

type Kind = 'DateTimeFormat' | 'NumberFormat';
type Locales = string | string[] | undefined;
type Options = Record<string, unknown> | undefined;

export function intlGlobals(host: IsolateHost) {
  const call = (
    kind: Kind,
    locales: Locales,
    options: Options,
    method: string,
    value?: number,
  ): unknown => JSON.parse(host.intl(JSON.stringify({ kind, locales, options, method, value })));

  /** A formatter's arguments as JSON can carry them: locales as strings, options as given. */
  const argumentsOf = (locales: unknown, options: unknown): [Locales, Options] => [
    locales === undefined
      ? undefined
      : Array.isArray(locales)
        ? locales.map(String)
        : String(locales),
    options === undefined ? undefined : (options as Options),
  ];

  const timeOf = (date: unknown): number =>
    date === undefined ? Date.now() : date instanceof Date ? date.getTime() : Number(date);

  class DateTimeFormat {
    readonly #locales: Locales;
    readonly #options: Options;
    /** Bound, as the standard's `format` getter returns it. */
    readonly format: (date?: Date | number) => string;

    constructor(locales?: unknown, options?: unknown) {
      [this.#locales, this.#options] = argumentsOf(locales, options);
      // Made now so that a bad locale or option throws here, as it does in Node.
      call('DateTimeFormat', this.#locales, this.#options, 'resolvedOptions');
      this.format = (date) =>
        call('DateTimeFormat', this.#locales, this.#options, 'format', timeOf(date)) as string;
    }

    formatToParts(date?: Date | number): { type: string; value: string }[] {
      return call(
        'DateTimeFormat',
        this.#locales,
        this.#options,
        'formatToParts',
        timeOf(date),
      ) as {
        type: string;
        value: string;
      }[];
    }

    resolvedOptions(): Record<string, unknown> {
      return call('DateTimeFormat', this.#locales, this.#options, 'resolvedOptions') as Record<
        string,
        unknown
      >;
    }

    static supportedLocalesOf(locales: unknown): string[] {
      const [list] = argumentsOf(locales, undefined);
      return list === undefined ? [] : Array.isArray(list) ? list : [list];
    }
  }

  class NumberFormat {
    readonly #locales: Locales;
    readonly #options: Options;
    readonly format: (value: number) => string;

    constructor(locales?: unknown, options?: unknown) {
      [this.#locales, this.#options] = argumentsOf(locales, options);
      call('NumberFormat', this.#locales, this.#options, 'resolvedOptions');
      this.format = (value) =>
        call('NumberFormat', this.#locales, this.#options, 'format', Number(value)) as string;
    }

    formatToParts(value: number): { type: string; value: string }[] {
      return call('NumberFormat', this.#locales, this.#options, 'formatToParts', Number(value)) as {
        type: string;
        value: string;
      }[];
    }

    resolvedOptions(): Record<string, unknown> {
      return call('NumberFormat', this.#locales, this.#options, 'resolvedOptions') as Record<
        string,
        unknown
      >;
    }

    static supportedLocalesOf(locales: unknown): string[] {
      return DateTimeFormat.supportedLocalesOf(locales);
    }
  }

  const Intl = { DateTimeFormat, NumberFormat };
  Object.defineProperty(Intl, Symbol.toStringTag, { value: 'Intl' });
  return { Intl };
}
