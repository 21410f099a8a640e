/**
 * A bot's console output as the caller stores it: the last `capChars` characters' worth of whole
 * lines (each line already truncated), with a note of how many earlier lines were dropped.
 */
export const CONSOLE_CAP_CHARS = 64 * 1024;
export const CONSOLE_LINE_CHARS = 8 * 1024;

export class ConsoleTail {
  private lines: string[] = [];
  private head = 0;
  private size = 0;
  private dropped = 0;

  constructor(private readonly capChars = CONSOLE_CAP_CHARS) {}

  push(text: string): void {
    const line =
      text.length > CONSOLE_LINE_CHARS ? `${text.slice(0, CONSOLE_LINE_CHARS)}… (truncated)` : text;
    this.lines.push(line);
    this.size += line.length + 1;
    while (this.size > this.capChars && this.head < this.lines.length - 1) {
      this.size -= this.lines[this.head].length + 1;
      this.lines[this.head++] = '';
      this.dropped++;
    }
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }

  text(): string {
    const kept = this.lines.slice(this.head).join('\n');
    return this.dropped > 0 ? `… (${this.dropped} earlier lines dropped)\n${kept}` : kept;
  }
}
