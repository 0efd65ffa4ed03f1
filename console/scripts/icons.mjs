// Writes src/icons.generated.json: the subset of the @iconify-json sets the
// console shows, so icons work offline (no Iconify API, no internet). The
// names are the console's own (src/icon-names.json) plus every
// `Icon: "set:name"` in the kernel's Go sources (menu seeds). Output is
// sorted: the same inputs give the same bytes.
import { readFileSync, writeFileSync, readdirSync, statSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const require = createRequire(import.meta.url)

function goFiles(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) goFiles(p, out)
    else if (name.endsWith('.go') && !name.endsWith('_test.go')) out.push(p)
  }
  return out
}

const names = new Set(JSON.parse(readFileSync(join(root, 'src/icon-names.json'), 'utf8')).names)
for (const f of goFiles(join(root, '..', 'host'))) {
  for (const m of readFileSync(f, 'utf8').matchAll(/Icon:\s*"([a-z0-9-]+:[a-z0-9-]+)"/g)) names.add(m[1])
}

const sets = {}
const missing = []
for (const full of [...names].sort()) {
  const [prefix, name] = full.split(':')
  let data
  try {
    data = require(`@iconify-json/${prefix}/icons.json`)
  } catch {
    missing.push(full)
    continue
  }
  const set = (sets[prefix] ??= { prefix, icons: {}, width: data.width ?? 16, height: data.height ?? 16 })
  let n = name
  const alias = data.aliases?.[n]
  if (alias) {
    set.aliases ??= {}
    set.aliases[n] = alias
    n = alias.parent
  }
  if (!data.icons[n]) {
    missing.push(full)
    continue
  }
  set.icons[n] = data.icons[n]
}
if (missing.length) {
  console.error(`icons: not in any installed @iconify-json set: ${missing.join(', ')}`)
  process.exit(1)
}
const sorted = Object.keys(sets).sort().map((k) => {
  const s = sets[k]
  const icons = Object.fromEntries(Object.keys(s.icons).sort().map((n) => [n, s.icons[n]]))
  const out = { prefix: s.prefix, icons, width: s.width, height: s.height }
  if (s.aliases) out.aliases = Object.fromEntries(Object.keys(s.aliases).sort().map((n) => [n, s.aliases[n]]))
  return out
})
writeFileSync(join(root, 'src/icons.generated.json'), JSON.stringify(sorted, null, 1) + '\n')
console.log(`icons: ${names.size} names in ${sorted.length} sets`)
