/**
 * PostgreSQL settings of the embedded database, sized for one process serving a few users: PGlite's defaults are
 * a server's (128 MB of shared buffers, 64 MB for maintenance), which a WebAssembly heap that never shrinks keeps
 * once touched. Sorts larger than `work_mem` spill to temporary files instead of growing the heap.
 */
export const POSTGRES_CONF = [
  "shared_buffers=16MB",
  "work_mem=2MB",
  "maintenance_work_mem=16MB",
  "temp_buffers=2MB",
  "wal_buffers=512kB",
  "max_connections=10"
].join("\n")
