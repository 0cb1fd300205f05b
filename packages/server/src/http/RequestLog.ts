import { Cause, Clock, Context, type Fiber, FiberRef, HashMap, HashSet, Inspectable, LogLevel } from "effect"

const MESSAGE = ["http request"]

export interface RequestLogFields {
  readonly requestId: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly durationMs: number
}

/**
 * The request's log line, at info, with its fields as annotations: what `Effect.logInfo("http request")` under
 * `Effect.annotateLogs(fields)` hands the fiber's loggers, without the two fiber-ref updates and the extra steps of
 * the interpreter per request. Skipped (fields not even built) when the minimum level filters info out.
 */
export const logRequest = (fiber: Fiber.RuntimeFiber<unknown, unknown>, fields: () => RequestLogFields): void => {
  if (LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)) return
  const loggers = fiber.getFiberRef(FiberRef.currentLoggers)
  if (HashSet.size(loggers) === 0) return
  const { durationMs, method, path, requestId, status } = fields()
  const annotations = fiber.getFiberRef(FiberRef.currentLogAnnotations).pipe(
    HashMap.set<string, unknown>("requestId", requestId),
    HashMap.set<string, unknown>("method", method),
    HashMap.set<string, unknown>("path", path),
    HashMap.set<string, unknown>("status", status),
    HashMap.set<string, unknown>("durationMs", durationMs)
  )
  const spans = fiber.getFiberRef(FiberRef.currentLogSpan)
  const context = fiber.getFiberRefs()
  const date = new Date(Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis())
  const fiberId = fiber.id()
  Inspectable.withRedactableContext(context, () => {
    for (const logger of loggers) {
      logger.log({
        fiberId,
        logLevel: LogLevel.Info,
        message: MESSAGE,
        cause: Cause.empty,
        context,
        spans,
        annotations,
        date
      })
    }
  })
}
