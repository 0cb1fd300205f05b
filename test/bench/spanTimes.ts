/**
 * Wall time per span name, for benches: a tracer that hands every span to the tracer in place (so nothing else
 * changes) and adds each finished span's duration to its name's total. Spans of one name that overlap (concurrent
 * work) add up, so a total can exceed the wall time it covers.
 */
import { Effect, Tracer } from "effect"

export interface SpanTimes {
  /** Milliseconds by span name, and how many spans of that name ended. */
  readonly totals: Map<string, { ms: number; count: number }>
  readonly measure: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** `statements`: also a total per SQL statement (its first words), under `sql: ...`. */
export const makeSpanTimes = (settings: { readonly statements?: boolean } = {}): SpanTimes => {
  const totals = new Map<string, { ms: number; count: number }>()
  const measure = <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.tracerWith((base) =>
      Effect.withTracer(
        self,
        Tracer.make({
          context: base.context,
          span: (name, parent, context, links, startTime, kind, options) => {
            const span = base.span(name, parent, context, links, startTime, kind, options)
            const end = span.end.bind(span)
            span.end = (endTime, exit) => {
              const total = totals.get(name) ?? { ms: 0, count: 0 }
              total.ms += Number(endTime - startTime) / 1e6
              total.count++
              totals.set(name, total)
              const text = span.attributes.get("db.query.text")
              if (settings.statements === true && typeof text === "string") {
                const statement = `sql: ${text.replace(/\s+/g, " ").slice(0, 90)}`
                const own = totals.get(statement) ?? { ms: 0, count: 0 }
                own.ms += Number(endTime - startTime) / 1e6
                own.count++
                totals.set(statement, own)
              }
              end(endTime, exit)
            }
            return span
          }
        })
      )
    )
  return { totals, measure }
}
