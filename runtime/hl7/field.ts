/**
 * One field of a segment, as Medplum's `Hl7Field`: its repetitions, each a list of components.
 * Numbering as Medplum's: components from 1, subcomponents and repetitions from 0.
 *
 * `components` holds ER7 text as written (escape sequences included), so `toString()` gives the
 * field back as written. Unlike Medplum, `getComponent` decodes the escape sequences and
 * `setComponent` encodes them (escapes.ts): a value read or written is the text itself.
 */
import { Hl7Context } from './context.js';
import { decodeEscapes, encodeEscapes } from './escapes.js';

export class Hl7Field {
  readonly context: Hl7Context;
  /** [repetition][component], ER7 text as written. */
  readonly components: string[][];

  constructor(components: string[][], context = new Hl7Context()) {
    this.context = context;
    this.components = components;
  }

  /**
   * A component numbered from 0 (`get(0)` is `getComponent(1)`).
   * @deprecated As Medplum's: use getComponent().
   */
  get(component: number, subcomponent?: number, repetition = 0): string {
    return this.getComponent(component + 1, subcomponent, repetition);
  }

  /**
   * Component `component` (from 1, as in PID-5.1) of repetition `repetition` (from 0), or its
   * subcomponent `subcomponent` (from 0), decoded; '' when absent.
   */
  getComponent(component: number, subcomponent?: number, repetition = 0): string {
    const whole = this.components[repetition]?.[component - 1] ?? '';
    const value =
      subcomponent === undefined
        ? whole
        : (whole.split(this.context.subcomponentSeparator)[subcomponent] ?? '');
    return decodeEscapes(value, this.context);
  }

  /** The field as ER7 text, escape sequences as written. */
  toString(): string {
    const { componentSeparator, repetitionSeparator } = this.context;
    return this.components
      .map((repetition) => repetition.join(componentSeparator))
      .join(repetitionSeparator);
  }

  /** A field from its ER7 text (repetitions and components split, escapes kept as written). */
  static parse(text: string, context = new Hl7Context()): Hl7Field {
    return new Hl7Field(
      String(text)
        .split(context.repetitionSeparator)
        .map((repetition) => repetition.split(context.componentSeparator)),
      context,
    );
  }

  /**
   * Sets a component (or one of its subcomponents) of a repetition to `value`, encoded: the
   * delimiters in it are literal text. Missing repetitions and subcomponents are added. False,
   * and nothing changed, for a component below 1 or a subcomponent or repetition below 0.
   */
  setComponent(component: number, value: string, subcomponent?: number, repetition = 0): boolean {
    if (
      !isIndex(component) ||
      component < 1 ||
      !isIndex(repetition) ||
      (subcomponent !== undefined && !isIndex(subcomponent))
    ) {
      return false;
    }
    while (this.components.length <= repetition) this.components.push(['']);
    const components = this.components[repetition];
    while (components.length < component) components.push('');
    const encoded = encodeEscapes(String(value ?? ''), this.context);
    if (subcomponent === undefined) {
      components[component - 1] = encoded;
    } else {
      const separator = this.context.subcomponentSeparator;
      const subcomponents = components[component - 1].split(separator);
      while (subcomponents.length <= subcomponent) subcomponents.push('');
      subcomponents[subcomponent] = encoded;
      components[component - 1] = subcomponents.join(separator);
    }
    return true;
  }
}

/** A whole number from 0: an array index. */
function isIndex(n: number): boolean {
  return Number.isInteger(n) && n >= 0;
}
