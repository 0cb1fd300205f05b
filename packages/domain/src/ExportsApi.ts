import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ADDRESS_FORM, DATE_FORM, IsoDate, IsoDateTime, SAFE_TEXT_PATTERN, TextAccepted } from "./Basic.js"
import { PageParams, strict } from "./Common.js"
import {
  InvalidAddressError,
  InvalidDateError,
  NotFoundError,
  ReplayInProgressError,
  UnsupportedFormatError
} from "./Errors.js"
import { EXPORT_FORMATS } from "./exports/Formats.js"

export const CreateExport = Schema.Struct({
  format: Schema.optional(TextAccepted(
    "`positions` (default), `activity`, `multipliers`, `gains` or `taxtool` (Koinly universal CSV).",
    { enum: EXPORT_FORMATS }
  )),
  from: Schema.optional(TextAccepted("First day included, YYYY-MM-DD.", DATE_FORM)),
  to: Schema.optional(TextAccepted("Last day included, YYYY-MM-DD.", DATE_FORM)),
  wallet: Schema.optional(TextAccepted(
    "Limit to one watched address; mixed case only as a valid EIP-55 checksum.",
    ADDRESS_FORM
  ))
}).annotations({ identifier: "CreateExport", ...strict })

export const ExportView = Schema.Struct({
  id: Schema.String,
  format: Schema.String,
  fileName: Schema.String,
  from: Schema.NullOr(IsoDate),
  to: Schema.NullOr(IsoDate),
  wallet: Schema.NullOr(Schema.String),
  rows: Schema.Int.annotations({ description: "Data rows, the header row not counted." }),
  bytes: Schema.Int,
  sha256: Schema.String.annotations({ description: "Hex SHA-256 of the bytes; the download's ETag." }),
  asOfBlock: Schema.NullOr(Schema.Int).annotations({
    description: "The newest block the record reflected when the export was made (null before any was recorded)."
  }),
  createdAt: IsoDateTime
}).annotations({ identifier: "Export" })
export type ExportView = typeof ExportView.Type

export const ExportList = Schema.Struct({
  exports: Schema.Array(ExportView),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ExportList" })

export const ExportPath = Schema.Struct({ id: TextAccepted("The export's id.", { pattern: SAFE_TEXT_PATTERN }) })

const Csv = HttpApiSchema.Text({ contentType: "text/csv" }).annotations({
  description: "The CSV file: RFC 4180, UTF-8 (`text/csv; charset=utf-8`), a header row. Columns: docs/EXPORTS.md."
})

type Header = readonly [name: string, description: string]

const exportHeaders: ReadonlyArray<Header> = [
  ["Content-Disposition", "`attachment; filename=\"scaledger-<format>-<YYYY-MM-DD>.csv\"`"],
  ["Scaledger-Export-Id", "The export's id (`GET /v1/exports/{id}`)."]
]
const etag: Header = ["ETag", "The quoted SHA-256 of the file."]
const cacheControl = (value: string): Header => ["Cache-Control", value]

/** Documents the headers an answer carries beside `Request-Id` (added to every answer later). */
const withHeaders = (
  op: Record<string, any>,
  byStatus: Readonly<Record<string, ReadonlyArray<Header>>>
): Record<string, any> => {
  const responses = op.responses as Record<string, { headers?: Record<string, unknown> }>
  for (const [status, headers] of Object.entries(byStatus)) {
    const response = responses[status]
    if (response === undefined) continue
    response.headers = {
      ...response.headers,
      ...Object.fromEntries(headers.map(([name, description]) => [name, { description, schema: { type: "string" } }]))
    }
  }
  return op
}

export class ExportsGroup extends HttpApiGroup.make("exports")
  .add(
    HttpApiEndpoint.post("create", "/exports")
      // No body at all means the defaults, like `{}`.
      .setPayload(Schema.NullOr(CreateExport))
      .addSuccess(Csv)
      .addError(UnsupportedFormatError)
      .addError(InvalidDateError)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .addError(ReplayInProgressError)
      .annotate(OpenApi.Transform, (op) => {
        // No body is the defaults, as `{}` is.
        if (op.requestBody !== undefined) (op.requestBody as { required?: boolean }).required = false
        return withHeaders(op, { "200": [...exportHeaders, cacheControl("`no-store`")] })
      })
      .annotate(
        OpenApi.Description,
        "Writes the record as CSV from one consistent snapshot, streamed as it is written (`content-type: text/csv; " +
          "charset=utf-8`, `content-disposition: attachment; filename=\"scaledger-<format>-<YYYY-MM-DD>.csv\"`, " +
          "`cache-control: no-store`, `Scaledger-Export-Id`). The export is stored whole and immutable: " +
          "`GET /v1/exports/{id}` returns the same bytes. Columns of each format: docs/EXPORTS.md."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/exports")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ExportList)
      .annotate(
        OpenApi.Description,
        "The account's completed exports, in order of creation, paginated with `limit` and `cursor`. Exports are " +
          "kept when the wallets behind them are deleted."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/exports/:id")
      .setPath(ExportPath)
      .addSuccess(Csv)
      .addSuccess(
        HttpApiSchema.Empty(304).annotations({ description: "Not Modified: `If-None-Match` names the ETag." })
      )
      .addError(NotFoundError)
      .annotate(OpenApi.Transform, (op) =>
        withHeaders(op, {
          "200": [...exportHeaders, etag, cacheControl("`private, no-cache`")],
          "304": [etag, cacheControl("`private, no-cache`")]
        }))
      .annotate(
        OpenApi.Description,
        "The stored bytes of an export, unchanged, with `ETag` (the quoted SHA-256). `If-None-Match` with that " +
          "ETag answers 304 Not Modified."
      )
  )
  .annotate(OpenApi.Title, "Exports")
{}
