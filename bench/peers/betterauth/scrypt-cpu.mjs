// The password check alone on better-auth's side: node:crypto's scrypt at
// better-auth's parameters (N=16384, r=16, p=1, a 64-byte key), the CPU time
// of the process per hash over 20 hashes after 3 of warm-up. authkit's side:
// `go test -bench Verify ./internal/scrypthash` in bench/. See BENCHMARKS.md.
import { scrypt } from "node:crypto";
import { promisify } from "node:util";

const hash = promisify(scrypt);
const params = { N: 16384, r: 16, p: 1, maxmem: 128 * 16384 * 16 * 2 };
const once = () => hash("correct horse battery staple", "00112233445566778899aabbccddeeff", 64, params);
for (let i = 0; i < 3; i++) await once();
const n = 20;
const start = process.cpuUsage();
for (let i = 0; i < n; i++) await once();
const used = process.cpuUsage(start);
console.log(`node:crypto scrypt: ${((used.user + used.system) / 1000 / n).toFixed(1)} ms of CPU per hash`);
