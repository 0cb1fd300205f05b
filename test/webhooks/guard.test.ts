import { describe, expect, it } from "@effect/vitest"
import { addressRange, checkTarget, isPublicAddress } from "@scaledger/workers/webhooks/EgressGuard"
import { Effect, Either } from "effect"

const guard = (url: string, allowPrivate = false) =>
  Effect.either(checkTarget(url, { allowPrivate, requireResolution: true }))

/** Targets a webhook must never reach with WEBHOOK_ALLOW_PRIVATE_TARGETS off (the default). */
const FORBIDDEN: ReadonlyArray<string> = [
  // loopback, every spelling the URL parser turns into 127.0.0.1
  "https://127.0.0.1/hook",
  "https://127.1.2.3/",
  "https://127.0.0.1:8443/hook",
  "https://2130706433/",
  "https://0x7f000001/",
  "https://0x7f.0.0.1/",
  "https://0177.0.0.1/",
  "https://017700000001/",
  "https://127.1/",
  "https://0x7f.1/",
  "https://127.0.0.1./",
  "https://[::1]/",
  "https://[0:0:0:0:0:0:0:1]/",
  // unspecified
  "https://0.0.0.0/",
  "https://0/",
  "https://[::]/",
  // RFC 1918
  "https://10.0.0.1/",
  "https://10.255.255.254/",
  "https://167772161/",
  "https://012.0.0.1/",
  "https://172.16.0.1/",
  "https://172.31.255.255/",
  "https://192.168.0.1/",
  "https://192.168.1.100:8080/x",
  "https://0xc0a80001/",
  // link-local (the cloud metadata address among them)
  "https://169.254.169.254/latest/meta-data/",
  "https://169.254.0.1/",
  "https://2852039166/",
  "https://[fe80::1]/",
  "https://[fe80::abcd:1234]/",
  // CGNAT
  "https://100.64.0.1/",
  "https://100.127.255.254/",
  // multicast and broadcast
  "https://224.0.0.1/",
  "https://239.255.255.250/",
  "https://255.255.255.255/",
  "https://[ff02::1]/",
  "https://[ff05::2]/",
  // unique-local
  "https://[fc00::1]/",
  "https://[fd12:3456:789a::1]/",
  // IPv4-mapped and -translated IPv6 forms of forbidden IPv4 addresses
  "https://[::ffff:127.0.0.1]/",
  "https://[::ffff:7f00:1]/",
  "https://[0:0:0:0:0:ffff:127.0.0.1]/",
  "https://[::ffff:10.0.0.1]/",
  "https://[::ffff:192.168.1.1]/",
  "https://[::ffff:169.254.169.254]/",
  "https://[::ffff:100.64.0.1]/",
  "https://[64:ff9b::7f00:1]/",
  "https://[::127.0.0.1]/",
  // reserved and documentation ranges
  "https://192.0.2.1/",
  "https://240.0.0.1/",
  // a name that resolves to loopback
  "https://localhost/",
  "https://localhost:9999/hook",
  // the same name fully qualified (the system resolver answers `localhost.` with ENOTFOUND)
  "https://localhost./",
  "https://LOCALHOST./hook"
]

describe("the egress guard", () => {
  it.effect(`refuses ${FORBIDDEN.length} forbidden targets with the flag off`, () =>
    Effect.gen(function*() {
      expect(FORBIDDEN.length).toBeGreaterThanOrEqual(40)
      for (const url of FORBIDDEN) {
        const result = yield* guard(url)
        expect(Either.isLeft(result), `${url} should be refused`).toBe(true)
        if (Either.isLeft(result)) expect(result.left.reason, url).toBe("forbidden_address")
      }
    }))

  it.effect("lets public addresses through and connects to the address it checked", () =>
    Effect.gen(function*() {
      for (
        const [url, address] of [
          ["https://93.184.216.34/hook", "93.184.216.34"],
          ["https://8.8.8.8:8443/x?y=1", "8.8.8.8"],
          ["https://[2606:4700:4700::1111]/", "2606:4700:4700::1111"],
          ["https://[::ffff:8.8.8.8]/", "::ffff:808:808"]
        ] as const
      ) {
        const result = yield* guard(url)
        expect(Either.isRight(result), url).toBe(true)
        if (Either.isRight(result)) expect(result.right?.address).toBe(address)
      }
    }))

  it.effect("refuses names under localhost (RFC 6761) at creation, whatever a resolver answers for them", () =>
    Effect.gen(function*() {
      for (const url of ["https://foo.localhost/", "https://a.b.LOCALHOST./hook", "https://localhost/"]) {
        const atCreation = yield* Effect.either(checkTarget(url, {
          allowPrivate: false,
          requireResolution: false,
          resolve: async () => [{ address: "93.184.216.34", family: 4 }]
        }))
        expect(Either.isLeft(atCreation) && atCreation.left.reason, url).toBe("forbidden_address")
      }
      // Not a name under localhost.
      const lookalike = yield* Effect.either(checkTarget("https://notlocalhost.example/", {
        allowPrivate: false,
        requireResolution: false,
        resolve: async () => [{ address: "93.184.216.34", family: 4 }]
      }))
      expect(Either.isRight(lookalike)).toBe(true)
    }))

  it.effect("refuses http, credentials and nonsense before any DNS", () =>
    Effect.gen(function*() {
      const reasons: Array<string> = []
      for (
        const url of [
          "http://93.184.216.34/",
          "ftp://93.184.216.34/",
          "https://user:pw@93.184.216.34/",
          "https://user@93.184.216.34/",
          "not a url",
          "https://",
          "https://93.184.216.34:0/",
          "https://93.184.216.34/\n",
          "https://a..example/"
        ]
      ) {
        const result = yield* guard(url)
        reasons.push(Either.isLeft(result) ? result.left.reason : "allowed")
      }
      expect(reasons).toEqual([
        "not_https",
        "not_https",
        "credentials",
        "credentials",
        "malformed",
        "malformed",
        "malformed",
        "malformed",
        "malformed"
      ])
    }))

  it.effect("checks every address a name resolves to, and refuses names that do not resolve at delivery", () =>
    Effect.gen(function*() {
      const mixed = yield* Effect.either(checkTarget("https://hooks.example.test/", {
        allowPrivate: false,
        requireResolution: true,
        resolve: async () => [{ address: "93.184.216.34", family: 4 }, { address: "10.0.0.7", family: 4 }]
      }))
      expect(Either.isLeft(mixed) && mixed.left.address).toBe("10.0.0.7")
      const rebinding = yield* Effect.either(checkTarget("https://hooks.example.test/", {
        allowPrivate: false,
        requireResolution: true,
        resolve: async () => [{ address: "::ffff:127.0.0.1", family: 6 }]
      }))
      expect(Either.isLeft(rebinding) && rebinding.left.reason).toBe("forbidden_address")
      const publicName = yield* checkTarget("https://hooks.example.test/", {
        allowPrivate: false,
        requireResolution: true,
        resolve: async () => [{ address: "93.184.216.34", family: 4 }]
      })
      expect(publicName).toMatchObject({ hostname: "hooks.example.test", address: "93.184.216.34", family: 4 })
      const nowhere = { allowPrivate: false, resolve: async () => [] }
      const atDelivery = yield* Effect.either(
        checkTarget("https://nowhere.invalid/", { ...nowhere, requireResolution: true })
      )
      expect(Either.isLeft(atDelivery) && atDelivery.left.reason).toBe("unresolvable")
      // At creation an unresolvable name is accepted: it is checked again at every delivery.
      expect(yield* checkTarget("https://nowhere.invalid/", { ...nowhere, requireResolution: false })).toBeUndefined()
    }))

  it.live(
    "a resolver that never answers counts as not resolving once the limit passes, at delivery and creation",
    () =>
      Effect.gen(function*() {
        const silent = {
          allowPrivate: false,
          resolve: () => new Promise<ReadonlyArray<{ address: string; family: number }>>(() => {}),
          resolveTimeoutMs: 50
        }
        const atDelivery = yield* Effect.either(
          checkTarget("https://slow-dns.example.test/", { ...silent, requireResolution: true })
        ).pipe(Effect.timeout(5_000))
        expect(Either.isLeft(atDelivery) && [atDelivery.left.reason, atDelivery.left.message]).toEqual([
          "unresolvable",
          "The host slow-dns.example.test did not resolve within 50 ms."
        ])
        const atCreation = yield* checkTarget("https://slow-dns.example.test/", { ...silent, requireResolution: false })
          .pipe(Effect.timeout(5_000))
        expect(atCreation).toBeUndefined()
      }),
    { timeout: 10_000 }
  )

  it.effect("with WEBHOOK_ALLOW_PRIVATE_TARGETS=true reaches loopback, still https only", () =>
    Effect.gen(function*() {
      expect(Either.isRight(yield* guard("https://127.0.0.1:8443/", true))).toBe(true)
      expect(Either.isRight(yield* guard("https://localhost/", true))).toBe(true)
      const http = yield* guard("http://127.0.0.1/", true)
      expect(Either.isLeft(http) && http.left.reason).toBe("not_https")
    }))

  it("classifies with the address library, IPv4-mapped forms as their IPv4 address", () => {
    expect(addressRange("::ffff:10.1.2.3")).toBe("private")
    expect(addressRange("100.64.1.1")).toBe("carrierGradeNat")
    expect(addressRange("fd00::1")).toBe("uniqueLocal")
    expect(isPublicAddress("1.1.1.1")).toBe(true)
    expect(isPublicAddress("not an address")).toBe(false)
  })
})
