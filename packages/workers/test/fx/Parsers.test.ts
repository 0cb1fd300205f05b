import { describe, expect, it } from "@effect/vitest"
import { addDays } from "@scaledger/domain/CalendarDates"
import { isTargetBusinessDay } from "@scaledger/domain/fx/TargetCalendar"
import {
  bundledHistoryPath,
  canonicalRate,
  FxParseError,
  loadBundledHistory,
  parseEcbCsv,
  parseEcbXml,
  parseEcbZip,
  parseFrankfurterDay,
  parseFrankfurterRange,
  rateFromNumber
} from "@scaledger/workers/fx/index"
import { Effect, Either } from "effect"
import { strToU8, zipSync } from "fflate"
import { readFileSync } from "node:fs"

const csvText = readFileSync(bundledHistoryPath, "utf8")
const right = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got ${String(e.left)}`)
  return e.right
}
const parseError = <A>(e: Either.Either<A, FxParseError>): FxParseError => {
  if (Either.isRight(e)) throw new Error("expected a parse error")
  expect(e.left).toBeInstanceOf(FxParseError)
  return e.left
}
const history = right(parseEcbCsv(csvText))
const byDate = new Map(history.map((d) => [d.date, d]))

describe("ECB CSV (the bundled eurofxref-hist.csv)", () => {
  it("parses every day, oldest first, in well under a second", () => {
    const started = performance.now()
    const days = right(parseEcbCsv(csvText))
    const elapsed = performance.now() - started
    console.log(`parsed ${days.length} days of eurofxref-hist.csv in ${elapsed.toFixed(0)} ms`)
    expect(elapsed).toBeLessThan(1000)
    expect(days).toHaveLength(6747)
    expect(days[0]!.date).toBe("1999-01-04")
    expect(days[days.length - 1]!.date).toBe("2025-05-09")
    for (let i = 1; i < days.length; i++) expect(days[i - 1]!.date < days[i]!.date).toBe(true)
  })

  it("keeps only the currencies published that day (N/A dropped, trailing comma ignored)", () => {
    const first = byDate.get("1999-01-04")!
    expect(first.perEur).toMatchObject({ USD: "1.1789", JPY: "133.73", GBP: "0.7111", CYP: "0.58231", ZAR: "6.9358" })
    for (const code of ["CNY", "INR", "MXN", "BRL", "BGN", "RON", "TRY", "IDR"]) {
      expect(first.perEur[code]).toBeUndefined()
    }
    const last = byDate.get("2025-05-09")!
    expect(last.perEur).toMatchObject({ USD: "1.1252", GBP: "0.8477", JPY: "163.36", BRL: "6.3647", INR: "96.0755" })
    for (const code of ["CYP", "EEK", "LTL", "LVL", "MTL", "ROL", "SIT", "SKK", "TRL", "HRK", "RUB"]) {
      expect(last.perEur[code]).toBeUndefined()
    }
    expect(Object.keys(last.perEur)).toHaveLength(30)
    expect(Object.keys(last.perEur)).not.toContain("")
  })

  it("matches the TARGET calendar on every weekday of the history", () => {
    const disagreements: Array<string> = []
    for (let d = "1999-01-04"; d <= "2025-05-09"; d = addDays(d, 1)) {
      if (byDate.has(d) !== isTargetBusinessDay(d)) disagreements.push(d)
    }
    expect(disagreements).toEqual([])
  })

  it("reads columns by name whatever their order", () => {
    const lines = csvText.trim().split("\n").slice(0, 40)
    const cells = lines.map((l) => l.split(","))
    const width = cells[0]!.length - 1
    const order = [0, ...Array.from({ length: width - 1 }, (_, i) => width - 1 - i)]
    const shuffled = cells.map((row) => order.map((i) => row[i]).join(",")).join("\r\n")
    expect(right(parseEcbCsv(shuffled))).toEqual(right(parseEcbCsv(lines.join("\n"))))
  })

  it("accepts rows without the trailing comma and spaces around cells", () => {
    const text = "Date, USD, JPY\n2025-05-09, 1.1252, 163.360\n2025-05-08, N/A, 163.45\n"
    expect(right(parseEcbCsv(text))).toEqual([
      { date: "2025-05-08", perEur: { JPY: "163.45" } },
      { date: "2025-05-09", perEur: { USD: "1.1252", JPY: "163.36" } }
    ])
  })

  it("rejects anything else with the line number", () => {
    expect(parseError(parseEcbCsv("")).detail).toContain("empty")
    expect(parseError(parseEcbCsv("When,USD,\n2025-05-09,1.1,\n")).line).toBe(1)
    expect(parseError(parseEcbCsv("Date,USD,USD,\n")).detail).toContain("repeated currency")
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n2025-05-09,1.1,\n")).line).toBe(2)
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n2025-05-09,1.1,abc,\n")).detail).toContain("bad rate")
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n2025-05-09,1.1,,\n")).detail).toContain("bad rate")
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n2025-05-09,1.1,-3,\n")).detail).toContain("bad rate")
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n2025-05-09,0,1,\n")).detail).toContain("bad rate")
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n09 May 2025,1.1,2,\n")).detail).toContain("bad date")
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n2025-05-09,1.1,2,\n2025-05-09,1.1,2,\n")).line).toBe(3)
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n2025-05-09,N/A,N/A,\n")).detail).toContain("no rates")
    expect(parseError(parseEcbCsv("Date,USD,JPY,\n2025-05-09,1.1,2,7\n")).detail).toContain("trailing")
  })

  it.effect("loads the bundled history", () =>
    Effect.gen(function*() {
      const bundled = yield* loadBundledHistory()
      expect(bundled.source).toBe("ecb-via-eurofxref")
      expect(JSON.stringify(bundled.days)).toBe(JSON.stringify(history))
      const missing = yield* Effect.flip(loadBundledHistory("/nonexistent/eurofxref-hist.csv"))
      expect(missing).toBeInstanceOf(FxParseError)
    }))
})

// eurofxref-daily.xml as the ECB serves it (single quotes, tabs), with the 2025-05-09 numbers of the CSV.
const may9 = byDate.get("2025-05-09")!
const dailyXml = `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
\t\t<Cube time='2025-05-09'>
${Object.entries(may9.perEur).map(([c, r]) => `\t\t\t<Cube currency='${c}' rate='${r}'/>`).join("\n")}
\t\t</Cube>
\t</Cube>
</gesmes:Envelope>`

const envelope = (cubes: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><gesmes:Envelope xmlns:gesmes="x" xmlns="y"><gesmes:subject>Reference rates</gesmes:subject><Cube>${cubes}</Cube></gesmes:Envelope>`

describe("ECB XML", () => {
  it("parses the daily file format", () => {
    expect(right(parseEcbXml(dailyXml))).toEqual([may9])
  })

  it("accepts both quote styles, any whitespace and comments", () => {
    const xml = `\uFEFF<?xml version='1.0'?>
<!-- a comment -->
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01">
  <gesmes:Sender><gesmes:name>European Central Bank &amp; co</gesmes:name></gesmes:Sender>
  <Cube>
    <Cube   time = "2025-05-08" >
      <Cube currency="USD"   rate="1.1297" />
      <!-- JPY next -->
      <Cube
        currency='JPY'
        rate='163.450'></Cube>
    </Cube>
    <Cube time='2025-05-09'><Cube currency='USD' rate='1.1252'/></Cube>
  </Cube>
</gesmes:Envelope>
`
    expect(right(parseEcbXml(xml))).toEqual([
      { date: "2025-05-08", perEur: { USD: "1.1297", JPY: "163.45" } },
      { date: "2025-05-09", perEur: { USD: "1.1252" } }
    ])
  })

  it("returns several days oldest first, as the history files list them newest first", () => {
    const days = history.slice(-64)
    const cubes = [...days].reverse().map((d) =>
      `<Cube time="${d.date}">${
        Object.entries(d.perEur).map(([c, r]) => `<Cube currency="${c}" rate="${r}"/>`).join("")
      }</Cube>`
    ).join("\n")
    expect(right(parseEcbXml(envelope(cubes)))).toEqual(days)
  })

  it("rejects malformed input instead of dropping rows", () => {
    const cases: Array<[string, string]> = [
      ["", "root element"],
      ["not xml at all", "root element"],
      [dailyXml.slice(0, dailyXml.lastIndexOf("\n", dailyXml.length / 2)), "unclosed"],
      [dailyXml.slice(0, dailyXml.length / 2), "malformed tag"],
      [dailyXml.replace("</gesmes:Envelope>", ""), "unclosed"],
      [dailyXml.replace("</gesmes:Sender>", "</gesmes:Sendr>"), "expected </gesmes:Sender>"],
      [envelope(`<Cube time='2025-05-09'><Cube currency='USD' rate='1.1252'/>`), "unexpected </gesmes:Envelope>"],
      [envelope(`<Cube time='2025-05-09'><Cube currency='USD'/></Cube>`), "currency and rate"],
      [envelope(`<Cube time='2025-05-09'><Cube currency='USD' rate='1.1252' extra='1'/></Cube>`), "currency and rate"],
      [envelope(`<Cube time='2025-05-09'><Cube currency='USD' rate='abc'/></Cube>`), "bad rate"],
      [envelope(`<Cube time='2025-05-09'><Cube currency='USD' rate=''/></Cube>`), "bad rate"],
      [envelope(`<Cube time='2025-05-09'><Cube currency='usd' rate='1'/></Cube>`), "bad currency"],
      [
        envelope(`<Cube time='2025-05-09'><Cube currency='USD' rate='1'/><Cube currency='USD' rate='1'/></Cube>`),
        "repeated currency"
      ],
      [
        envelope(
          `<Cube time='2025-05-09'><Cube currency='USD' rate='1'/></Cube><Cube time='2025-05-09'><Cube currency='USD' rate='1'/></Cube>`
        ),
        "repeated day"
      ],
      [envelope(`<Cube time='2025-05-32'><Cube currency='USD' rate='1'/></Cube>`), "bad time"],
      [envelope(`<Cube><Cube currency='USD' rate='1'/></Cube>`), "attribute time"],
      [envelope(`<Cube time='2025-05-09'></Cube>`), "no rates"],
      [envelope(`<Cube time='2025-05-09'>1.1252<Cube currency='USD' rate='1'/></Cube>`), "text inside Cube"],
      [envelope(`<Cube time='2025-05-09'><Rate currency='USD' rate='1'/></Cube>`), "unexpected <Rate>"],
      [envelope(`<Cube time='2025-05-09'><Cube currency='USD' rate="1'/></Cube>`), "malformed tag"],
      [
        envelope(`<Cube time='2025-05-09'><Cube currency='USD' rate='1'><Cube currency='JPY' rate='1'/></Cube></Cube>`),
        "cannot contain"
      ],
      [`<gesmes:Envelope><gesmes:subject>x</gesmes:subject></gesmes:Envelope>`, "no Cube"],
      [`<gesmes:Envelope><Cube/><Cube/></gesmes:Envelope>`, "more than one outer Cube"],
      [`${dailyXml}<extra/>`, "content after the root"],
      [`<html><body>Service unavailable</body></html>`, "root element"],
      [envelope(`<![CDATA[x]]>`), "unsupported"]
    ]
    for (const [xml, detail] of cases) {
      const error = parseError(parseEcbXml(xml))
      expect(error.format).toBe("ecb-xml")
      expect(error.detail, `for ${xml.slice(0, 80)}`).toContain(detail)
    }
  })

  it("reports the line of the problem", () => {
    const broken = dailyXml.replace("<Cube currency='GBP' rate='0.8477'/>", "<Cube currency='GBP' rate='0,8477'/>")
    const error = parseError(parseEcbXml(broken))
    expect(error.line).toBe(dailyXml.split("\n").findIndex((l) => l.includes("'GBP'")) + 1)
  })
})

describe("ECB zip", () => {
  it("unzips eurofxref-hist.csv and parses it like the CSV", () => {
    const zip = zipSync({ "eurofxref-hist.csv": strToU8(csvText) }, { level: 1 })
    expect(JSON.stringify(right(parseEcbZip(zip)))).toBe(JSON.stringify(history))
  })

  it("rejects a zip that is not one, or lacks the CSV", () => {
    expect(parseError(parseEcbZip(strToU8("<html>Not found</html>"))).format).toBe("ecb-zip")
    const zip = zipSync({ "eurofxref-hist.csv": strToU8(csvText) }, { level: 1 })
    expect(parseError(parseEcbZip(zip.slice(0, zip.length / 2))).format).toBe("ecb-zip")
    expect(
      parseError(parseEcbZip(zipSync({ "readme.txt": strToU8("x"), "other.csv": strToU8("y"), "b.csv": strToU8("z") })))
        .detail
    )
      .toContain("expected eurofxref-hist.csv")
  })
})

describe("Frankfurter JSON", () => {
  it("parses a single day", () => {
    const body = JSON.parse(
      `{"amount":1.0,"base":"EUR","date":"2025-05-09","rates":{"AUD":1.7572,"GBP":0.8477,"IDR":18606.59,"JPY":163.36,"USD":1.1252}}`
    )
    expect(right(parseFrankfurterDay(body))).toEqual({
      date: "2025-05-09",
      perEur: { AUD: "1.7572", GBP: "0.8477", IDR: "18606.59", JPY: "163.36", USD: "1.1252" }
    })
  })

  it("parses a range, oldest first", () => {
    const body = {
      amount: 1,
      base: "EUR",
      start_date: "2025-05-08",
      end_date: "2025-05-09",
      rates: { "2025-05-09": { USD: 1.1252 }, "2025-05-08": { USD: 1.1297, JPY: 163.45 } }
    }
    expect(right(parseFrankfurterRange(body))).toEqual([
      { date: "2025-05-08", perEur: { USD: "1.1297", JPY: "163.45" } },
      { date: "2025-05-09", perEur: { USD: "1.1252" } }
    ])
  })

  it("rejects other bases, amounts and shapes", () => {
    const day = { amount: 1, base: "EUR", date: "2025-05-09", rates: { USD: 1.1252 } }
    expect(parseError(parseFrankfurterDay({ ...day, base: "USD" })).detail).toContain("base EUR")
    expect(parseError(parseFrankfurterDay({ ...day, amount: 10 })).detail).toContain("amount 1")
    expect(parseError(parseFrankfurterDay({ ...day, rates: { USD: "1.1252" } })).detail).toContain("bad rate")
    expect(parseError(parseFrankfurterDay({ ...day, rates: { USD: -1 } })).detail).toContain("bad rate")
    expect(parseError(parseFrankfurterDay({ ...day, rates: {} })).detail).toContain("no rates")
    expect(parseError(parseFrankfurterDay({ ...day, date: "09/05/2025" })).detail).toContain("bad date")
    expect(parseError(parseFrankfurterDay([])).detail).toContain("object")
    expect(parseError(parseFrankfurterDay({ message: "not found" })).detail).toContain("base EUR")
    const range = {
      amount: 1,
      base: "EUR",
      start_date: "2025-05-08",
      end_date: "2025-05-08",
      rates: { "2025-05-09": { USD: 1 } }
    }
    expect(parseError(parseFrankfurterRange(range)).detail).toContain("outside")
  })
})

describe("rate strings", () => {
  it("are canonical", () => {
    expect(canonicalRate("1.1252")).toBe("1.1252")
    expect(canonicalRate("163.360")).toBe("163.36")
    expect(canonicalRate("13168")).toBe("13168")
    expect(canonicalRate("13168.0")).toBe("13168")
    expect(canonicalRate("0.58231")).toBe("0.58231")
    expect(canonicalRate("00.5")).toBe("0.5")
    expect(canonicalRate("0")).toBeUndefined()
    expect(canonicalRate("0.000")).toBeUndefined()
    expect(canonicalRate("1e3")).toBeUndefined()
    expect(canonicalRate(".5")).toBeUndefined()
    expect(canonicalRate("N/A")).toBeUndefined()
    expect(rateFromNumber(1.1252)).toBe("1.1252")
    expect(rateFromNumber(18606.59)).toBe("18606.59")
    expect(rateFromNumber(1e-7)).toBe("0.0000001")
    expect(rateFromNumber(1.5e-7)).toBe("0.00000015")
    expect(rateFromNumber(2.5e21)).toBe("2500000000000000000000")
    expect(rateFromNumber(1e21)).toBe("1000000000000000000000")
    expect(rateFromNumber(Number.NaN)).toBeUndefined()
  })
})
