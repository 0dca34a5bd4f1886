// A Node.js app of the realapps scenario: loads its records (JSON lines) into objects, as an
// app loads its data at start, says `ready`, then serves returns to it.
//
//   node app.js DATA.jsonl
//
// Each `visit N` on its input is a return: it reads the hot head (the first 5 % of records)
// and a window of 4 % that varies by visit, writes a field in that window, and answers `ok`.
// `exit` ends it.
'use strict';
const fs = require('fs');
const readline = require('readline');

const records = [];
const text = fs.readFileSync(process.argv[2], 'utf8');
let from = 0;
for (;;) {
  const nl = text.indexOf('\n', from);
  if (nl < 0) break;
  records.push(JSON.parse(text.slice(from, nl)));
  from = nl + 1;
}
const byTag = new Map();
for (const r of records) {
  for (const t of r.tags) {
    if (!byTag.has(t)) byTag.set(t, []);
    byTag.get(t).push(r.id);
  }
}
const hot = Math.max(1, Math.floor(records.length / 20));
const window = Math.max(1, Math.floor(records.length / 25));

// A seeded start per visit (mulberry32), so every manager sees the same returns.
function startOf(n) {
  let t = (n + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) % records.length;
}

process.stdout.write(`ready ${records.length}\n`);
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const words = line.trim().split(/\s+/);
  if (words[0] === 'exit') process.exit(0);
  if (words[0] !== 'visit') return;
  const n = Number(words[1] || 0);
  let acc = 0;
  for (let i = 0; i < hot; i++) acc += records[i].body.length + records[i].n;
  const start = startOf(n);
  for (let i = 0; i < window; i++) {
    const r = records[(start + i) % records.length];
    acc += r.title.length + byTag.get(r.tags[0]).length;
    r.seen = n;
  }
  process.stdout.write(`ok ${acc}\n`);
});
rl.on('close', () => process.exit(0));
