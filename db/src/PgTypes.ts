import Pg from "pg"

const OID = { int8: 20, date: 1082 } as const

/**
 * Type parsing shared by PostgreSQL and PGlite so both answer alike: `int8` and `numeric` as strings (never a
 * float), `date` as its `YYYY-MM-DD` text (never a local-midnight Date), timestamps as Date.
 */
export const pgTypes: Pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === OID.int8 || oid === OID.date) return (value: string) => value
    return Pg.types.getTypeParser(oid, format as "text")
  }) as Pg.CustomTypesConfig["getTypeParser"]
}

export const pgliteParsers = {
  [OID.int8]: (value: string) => value,
  [OID.date]: (value: string) => value
}
