import { describe, expect, it } from "vitest"
import { AnswerLru } from "../src/http/AnswerLru.js"

describe("AnswerLru", () => {
  it("drops the least recently used when the count bound is reached", () => {
    const lru = new AnswerLru<string>(2, 1_000)
    lru.set("a", "A", 10)
    lru.set("b", "B", 10)
    expect(lru.get("a")).toBe("A") // a is now the most recently used
    lru.set("c", "C", 10)
    expect(lru.get("b")).toBeUndefined()
    expect(lru.get("a")).toBe("A")
    expect(lru.get("c")).toBe("C")
    expect(lru.size).toBe(2)
  })

  it("drops as many as needed to stay under the byte bound, and counts replaced entries once", () => {
    const lru = new AnswerLru<string>(100, 100)
    lru.set("a", "A", 40)
    lru.set("b", "B", 40)
    lru.set("a", "A2", 30) // replaces a: 70 bytes held, not 110
    expect(lru.bytes).toBe(70)
    expect(lru.get("b")).toBe("B")
    lru.set("c", "C", 60) // 130 > 100: the least recently used (a) goes
    expect(lru.get("a")).toBeUndefined()
    expect(lru.get("b")).toBe("B")
    expect(lru.bytes).toBe(100)
    lru.set("d", "D", 90) // both b and c go
    expect(lru.size).toBe(1)
    expect(lru.bytes).toBe(90)
  })

  it("does not keep a value larger than the byte bound, and forgets what it held under that key", () => {
    const lru = new AnswerLru<string>(10, 50)
    lru.set("a", "A", 10)
    lru.set("a", "huge", 51)
    expect(lru.get("a")).toBeUndefined()
    expect(lru.bytes).toBe(0)
  })
})
