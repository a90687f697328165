// A deadline for outbound work that fires whatever the garbage collector does.
//
// `AbortSignal.timeout()` is only kept alive by its listeners, and `AbortSignal.any()` holds its
// sources weakly: on Node 20 a garbage collection can drop the timeout while a request waits on a
// socket that never answers, and then nothing ends the request. A plain timer is held by the event
// loop until it fires or is cleared, and it holds the controller it aborts.

export interface Deadline {
  /** Aborted when the time is up (with a TimeoutError) or when the outer signal aborts. */
  signal: AbortSignal
  /** Stops the timer and lets go of the outer signal; call it once the work is over. */
  clear: () => void
}

/** A signal aborted after `timeoutMs` or with `outer`, whichever comes first. */
export function deadline(timeoutMs: number, outer?: AbortSignal): Deadline {
  const controller = new AbortController()
  const onOuterAbort = () => controller.abort(outer!.reason)
  const timer = setTimeout(() => {
    controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'))
  }, timeoutMs)
  if (outer?.aborted) onOuterAbort()
  else outer?.addEventListener('abort', onOuterAbort, { once: true })
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer)
      outer?.removeEventListener('abort', onOuterAbort)
    },
  }
}

/** Runs `work` with a deadline that is cleared when the work ends, however it ends. */
export async function withDeadline<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const d = deadline(timeoutMs, outer)
  try {
    return await work(d.signal)
  } finally {
    d.clear()
  }
}

/** `work`, or a rejection with the signal's reason as soon as it aborts, whichever is first. */
export function settledBy<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
