// Tokenizes the Linux kernel's reStructuredText documentation into corpus A (JSON lines).
//   node tokenize.mjs DOCUMENTATION_DIR OUT_FILE
// DOCUMENTATION_DIR is linux-doc-6.1's /usr/share/doc/linux-doc-6.1/Documentation, unpacked.
// The recipe is docs/performance.md's "Corpus A"; jobs/make_corpus.sh drives this script.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Tiktoken } from "js-tiktoken/lite";
import o200k_base from "js-tiktoken/ranks/o200k_base";

const kFolders = ["admin-guide", "networking", "filesystems", "virt", "trace", "process", "core-api",
  "RCU", "dev-tools", "power", "bpf", "mm", "security", "locking", "kbuild", "scheduler", "block",
  "crypto", "kernel-hacking", "livepatch", "doc-guide"];
const kMaxTokens = 8192;

function fail(message) {
  process.stderr.write(`tokenize: ${message}\n`);
  process.exit(1);
}

// Regular files named *.rst.gz under dir, as paths relative to root ("/"-separated).
function rst_files(root, dir, out) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) rst_files(root, path, out);
    else if (entry.isFile() && entry.name.endsWith(".rst.gz")) out.push(path);
  }
  return out;
}

// Cuts a file's tokens into slices of at most kMaxTokens, each cut after the last token of the
// window's second half that holds a blank line ("\n\n"), else a line end, else at the window's end.
function slices(tokens, holds) {
  const out = [];
  let start = 0;
  while (tokens.length - start > kMaxTokens) {
    const end = start + kMaxTokens;
    let cut = -1;
    for (const needle of ["\n\n", "\n"]) {
      for (let i = end - 1; i >= start + kMaxTokens / 2 && cut < 0; --i) {
        if (holds(tokens[i], needle)) cut = i + 1;
      }
      if (cut >= 0) break;
    }
    if (cut < 0) cut = end;
    out.push(tokens.slice(start, cut));
    start = cut;
  }
  out.push(tokens.slice(start));
  return out;
}

const [doc_dir, out_file] = process.argv.slice(2);
if (!doc_dir || !out_file) fail("usage: node tokenize.mjs DOCUMENTATION_DIR OUT_FILE");

const enc = new Tiktoken(o200k_base);
const token_text = new Map();
const holds = (token, needle) => {
  if (!token_text.has(token)) token_text.set(token, enc.decode([token]));
  return token_text.get(token).includes(needle);
};

const files = [];
for (const folder of kFolders) {
  try {
    rst_files(doc_dir, folder, files);
  } catch (e) {
    fail(`${join(doc_dir, folder)}: ${e.message}`);
  }
}
// Path order: the relative paths compared as strings (all ASCII, so byte order).
files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const lines = [];
let total = 0;
let split = 0;
for (const path of files) {
  const bytes = gunzipSync(readFileSync(join(doc_dir, path)));
  const text = bytes.toString("utf8");
  // Special-token strings, were there any, are encoded as plain text.
  const tokens = enc.encode(text, [], []);
  const parts = slices(tokens, holds);
  const id = path.slice(0, -".gz".length);
  if (!Buffer.from(parts.map((p) => enc.decode(p)).join(""), "utf8").equals(bytes)) {
    fail(`${path}: its slices do not decode back to the file`);
  }
  const kept = parts.filter((p) => p.length > 0);
  if (kept.length > 1) ++split;
  kept.forEach((p, i) => {
    lines.push(JSON.stringify({ id: kept.length > 1 ? `${id}#${i}` : id, tokens: p }));
    total += p.length;
  });
}
writeFileSync(out_file, lines.map((l) => l + "\n").join(""));
process.stdout.write(`tokenize: ${files.length} files, ${lines.length} documents ` +
  `(${split} files split), ${total} tokens -> ${out_file}\n`);
