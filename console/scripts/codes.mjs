// Writes src/codes.generated.json: the kernel's error codes and their
// msgKeys, read from host/errcode/kernel.go (the catalog's source), so the
// console names a code's text (an SSO ?error=<code>) from the kernel's
// own table. Sorted by code: the same input gives the same bytes.
import { readFileSync, writeFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const src = readFileSync(join(root, '..', 'host/errcode/kernel.go'), 'utf8')
const numbers = new Map()
for (const m of src.matchAll(/^\t(\w+)\s+Code = (\d+)/gm)) numbers.set(m[1], Number(m[2]))
const codes = {}
for (const m of src.matchAll(/^\t\{(\w+), "\w+", "([\w.]+)"\}/gm)) {
  const n = numbers.get(m[1])
  if (n === undefined) throw new Error(`codes: ${m[1]} has no number`)
  codes[n] = m[2]
}
if (Object.keys(codes).length < 50) throw new Error('codes: the catalog was not found in kernel.go')
const sorted = Object.fromEntries(Object.keys(codes).map(Number).sort((a, b) => a - b).map((n) => [n, codes[n]]))
writeFileSync(join(root, 'src/codes.generated.json'), JSON.stringify(sorted, null, 1) + '\n')
console.log(`codes: ${Object.keys(sorted).length} kernel codes`)
