// A reporter for `node --test` (scripts/node-test.sh adds it next to the
// spec reporter): it counts the tests that ran in each file and writes a
// summary whose last line is "node-test-count: ok" or "node-test-count:
// FAIL ...". node --test itself exits 0 when its patterns match no file
// and reports a file that declares no test as one passing test: a suite
// that checks nothing would pass. Here zero tests in all, a file with no
// test, and a skipped or todo test are failures (and so is a failed test,
// as node --test's own exit status says).
export default async function* counts(source) {
  const files = new Map() // file -> { passed, failed, skipped }
  const entry = (file) => {
    if (!files.has(file)) files.set(file, { passed: 0, failed: 0, skipped: 0 })
    return files.get(file)
  }
  for await (const e of source) {
    if (e.type !== 'test:pass' && e.type !== 'test:fail') continue
    const d = e.data
    const file = d.file ?? '(no file)'
    const f = entry(file)
    // A file without tests is reported as one test named after the file;
    // describe() blocks are suites, not tests.
    if (d.name === d.file || d.details?.type === 'suite') continue
    if (d.skip || d.todo) f.skipped++
    else if (e.type === 'test:pass') f.passed++
    else f.failed++
  }
  let passed = 0, failed = 0, skipped = 0
  const problems = []
  for (const [file, f] of files) {
    passed += f.passed
    failed += f.failed
    skipped += f.skipped
    yield `node-test-count: ${file}: ${f.passed} passed, ${f.failed} failed, ${f.skipped} skipped\n`
    if (f.passed + f.failed === 0) problems.push(`${file} ran no test`)
    if (f.failed) problems.push(`${file} failed ${f.failed}`)
    if (f.skipped) problems.push(`${file} skipped ${f.skipped}`)
  }
  yield `node-test-count: ${passed + failed} tests in ${files.size} files: ${passed} passed, ${failed} failed, ${skipped} skipped\n`
  if (files.size === 0) problems.push('no test file ran')
  yield problems.length ? `node-test-count: FAIL ${problems.join('; ')}\n` : 'node-test-count: ok\n'
}
