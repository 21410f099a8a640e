/**
 * Enough of Intl for the formatting bots do (Medplum's formatDateTime, formatTime…):
 * DateTimeFormat and NumberFormat, each formatted by Node's Intl (ICU) in the worker
 * (isolate/isolate-host.ts `intl`), since QuickJS has no Intl at all.
 */
import { nativesOf, type IsolateHost } from './isolate-host.js';

type Kind = 'DateTimeFormat' | 'NumberFormat';

/**
 * Where Date's and Number's toLocale…String (forwarded in every isolate by sandbox-locale.ts)
 * find their implementation: on the Intl global, loaded on their first call.
 */
export const TO_LOCALE_KEY = 'graphir.toLocale';
const TO_LOCALE = Symbol.for(TO_LOCALE_KEY);
const DATE = { year: 'numeric', month: 'numeric', day: 'numeric' };
const TIME = { hour: 'numeric', minute: 'numeric', second: 'numeric' };
const DATE_KEYS = ['weekday', 'year', 'month', 'day', 'dateStyle'];
const TIME_KEYS = ['dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits', 'timeStyle'];
/** The defaults each method adds when no date or time component is asked for. */
const DEFAULTS: Record<string, { options: object; keys: string[] }> = {
  toLocaleString: { options: { ...DATE, ...TIME }, keys: [...DATE_KEYS, ...TIME_KEYS] },
  toLocaleDateString: { options: DATE, keys: DATE_KEYS },
  toLocaleTimeString: { options: TIME, keys: TIME_KEYS },
};

type Locales = string | string[] | undefined;
type Options = Record<string, unknown> | undefined;

export function intlGlobals(isolateHost: IsolateHost) {
  const host = nativesOf(isolateHost);
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

  function toLocale(value: unknown, method: string, locales?: unknown, options?: Options): string {
    if (typeof value === 'number' || value instanceof Number) {
      return new NumberFormat(locales, options).format(Number(value));
    }
    if (!(value instanceof Date)) throw new TypeError('this is not a Date object.');
    if (Number.isNaN(value.getTime())) return 'Invalid Date';
    const { options: defaults, keys } = DEFAULTS[method];
    const given = options ?? {};
    const asked = keys.some((key) => given[key] !== undefined);
    return new DateTimeFormat(locales, asked ? given : { ...defaults, ...given }).format(value);
  }

  const Intl = { DateTimeFormat, NumberFormat };
  Object.defineProperty(Intl, Symbol.toStringTag, { value: 'Intl' });
  Object.defineProperty(Intl, TO_LOCALE, { value: toLocale });
  return { Intl };
}
