/** The part of autocannon's API the benchmarks use (the package ships no types). */
declare module "autocannon" {
  namespace autocannon {
    interface Options {
      readonly url: string
      readonly connections?: number
      readonly duration?: number
      readonly method?: string
      readonly headers?: Record<string, string>
      readonly body?: string
    }
    interface Result {
      readonly requests: { readonly average: number; readonly total: number }
      readonly latency: { readonly p50: number; readonly p99: number }
      readonly non2xx: number
      readonly errors: number
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>
  export default autocannon
}
