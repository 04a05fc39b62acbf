/** `npm run api`: writes the API report (api/report.api.txt) from the entries' sources. */
import { writeFileSync } from "node:fs";
import { apiReport, exportCounts } from "./api-report.js";

const root = new URL("../../", import.meta.url).pathname;
const report = apiReport(root);
writeFileSync(`${root}api/report.api.txt`, report);
for (const [entry, count] of Object.entries(exportCounts(report))) console.log(`${entry}: ${count} names`);
