/** Calls `onTick` every `everyMs` while told to run: the clock of the client's countdowns. */
export class Ticker {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly onTick: () => void,
    private readonly everyMs: number,
  ) {}

  run(running: boolean): void {
    if (running && this.timer === undefined) this.timer = setInterval(this.onTick, this.everyMs);
    if (!running && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
