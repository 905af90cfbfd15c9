/** Hears how long each asynchronous addon call took (for /metrics). */
export type NativeCallObserver = (operation: string, seconds: number) => void;
let callObserver: NativeCallObserver | undefined;

export function observeNativeCalls(observer: NativeCallObserver | undefined): void {
  callObserver = observer;
}

/** Runs an addon call, telling the observer how long it took. */
export function timed<T>(operation: string, call: () => Promise<T>): Promise<T> {
  const observer = callObserver;
  if (!observer) return call();
  const started = performance.now();
  return call().finally(() => observer(operation, (performance.now() - started) / 1000));
}
