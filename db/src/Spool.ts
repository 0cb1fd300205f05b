import { Data, Effect, Option, Stream } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"

/** Text gathered before it is encoded into a chunk of bytes. */
const TEXT_CHUNK = 64 * 1024
/** Bytes read back from the file at a time. */
const READ_CHUNK = 256 * 1024

/** A spool's file could not be made, written or read (the disk full, the temporary directory gone). */
export class SpoolError extends Data.TaggedError("SpoolError")<{ readonly message: string; readonly cause: unknown }> {}

const failed = (what: string) => (cause: unknown) =>
  new SpoolError({ message: `${what}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })

/**
 * A body written whole before any of it is sent (so a failure midway is still an error answer, and the transaction
 * it is read in ends at the server's pace, not the client's), without being held whole in memory: its UTF-8 bytes
 * stay in memory up to `memoryLimit`, then move to a temporary file that is unlinked at once (its open handle keeps
 * it; the system reclaims the space when the handle closes, even after a crash). `body` reads it back a chunk at a
 * time and closes the file at its end; `discard` closes it when the body will not be read.
 */
export class Spool {
  private text = ""
  private chunks: Array<Uint8Array> = []
  private inMemory = 0
  private file: Fs.FileHandle | undefined
  private written = 0

  constructor(private readonly memoryLimit: number) {}

  /** Bytes written so far (all of them, once `flush` ran). */
  get byteLength(): number {
    return this.written
  }

  /** Appends `text`; encodes and moves bytes on once enough text is gathered. */
  write(text: string): Effect.Effect<void, SpoolError> {
    return Effect.suspend(() => {
      this.text += text
      return this.text.length < TEXT_CHUNK ? Effect.void : this.flush
    })
  }

  /** Encodes the gathered text; past the memory limit, moves everything to the file. */
  readonly flush: Effect.Effect<void, SpoolError> = Effect.suspend(() => {
    this.encodeText()
    return this.spillIfOver()
  })

  /** Appends bytes (after the text written before them). */
  writeBytes(bytes: Uint8Array): Effect.Effect<void, SpoolError> {
    return Effect.suspend(() => {
      this.encodeText()
      this.keep(bytes)
      return this.spillIfOver()
    })
  }

  /** Appends everything `other` holds, and gives its file back. */
  append(other: Spool): Effect.Effect<void, SpoolError> {
    return Effect.flatMap(other.flush, () => Stream.runForEach(other.body(), (chunk) => this.writeBytes(chunk)))
  }

  private keep(bytes: Uint8Array): void {
    this.chunks.push(bytes)
    this.inMemory += bytes.length
    this.written += bytes.length
  }

  private encodeText(): void {
    if (this.text === "") return
    this.keep(Buffer.from(this.text, "utf8"))
    this.text = ""
  }

  private spillIfOver(): Effect.Effect<void, SpoolError> {
    if (this.file === undefined && this.inMemory <= this.memoryLimit) return Effect.void
    return Effect.tryPromise({
      try: async () => {
        if (this.file === undefined) {
          const path = Path.join(Os.tmpdir(), `scaledger-spool-${randomBytes(8).toString("hex")}`)
          const file = await Fs.open(path, "wx+", 0o600)
          await Fs.unlink(path).catch(async (error: unknown) => {
            await file.close()
            throw error
          })
          this.file = file
        }
        const chunks = this.chunks
        this.chunks = []
        this.inMemory = 0
        await this.file.writev(chunks)
      },
      catch: failed("could not write the spool file")
    })
  }

  /** Closes the file, if the bytes moved to one (the body is not read). */
  readonly discard: Effect.Effect<void> = Effect.suspend(() => {
    const file = this.file
    this.file = undefined
    this.chunks = []
    return file === undefined ? Effect.void : Effect.promise(() => file.close().catch(() => undefined))
  })

  /** The bytes written, read back in order (after `flush`); a file is closed once read or interrupted. */
  body(): Stream.Stream<Uint8Array, SpoolError> {
    const file = this.file
    if (file === undefined) return Stream.fromIterable(this.chunks)
    const size = this.written
    return Stream.paginateEffect(0, (position) =>
      Effect.tryPromise({
        try: async () => {
          const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, size - position))
          const { bytesRead } = await file.read(buffer, 0, buffer.length, position)
          if (bytesRead === 0) throw new Error(`the spool file ended at ${position} of ${size} bytes`)
          const next = position + bytesRead
          return [buffer.subarray(0, bytesRead) as Uint8Array, next < size ? Option.some(next) : Option.none()] as const
        },
        catch: failed("could not read the spool file")
      })).pipe(Stream.ensuring(this.discard))
  }
}
