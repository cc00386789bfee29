// `node attw.mjs <profile> <tarball>...`: @arethetypeswrong's analysis of each packed tarball,
// judged as `attw <tarball> --profile <profile>` judges it, printed as one JSON object
// { [tarball]: string[] } listing the problems that fail it (none: it passes).
//
// One process for all tarballs: the CLI loads TypeScript once per package (about 1 s of CPU
// each), this loads it once. The verdict is the CLI's: a problem fails the check unless it
// belongs to a resolution the profile ignores. For a readable table of one package, run
// `pnpm --filter @ids/integration-tests exec attw <tarball> --profile node16`.
import { readFileSync } from 'node:fs';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { problemKindInfo } from '@arethetypeswrong/core/problems';

/**
 * The resolutions each profile of the CLI ignores (its --profile option).
 * @type {Record<string, string[]>}
 */
const PROFILES = {
  strict: [],
  node16: ['node10'],
  'esm-only': ['node10', 'node16-cjs'],
};

const [profile, ...tarballs] = process.argv.slice(2);
const ignored = PROFILES[profile ?? ''];
if (!ignored) {
  console.error(
    `expected a profile (${Object.keys(PROFILES).join(', ')}), received ${JSON.stringify(profile)}`,
  );
  process.exit(2);
}

/** @type {Record<string, string[]>} */
const report = {};
for (const tarball of tarballs) {
  const analysis = await checkPackage(createPackageFromTarballData(new Uint8Array(readFileSync(tarball))));
  if (!analysis.types) {
    report[tarball] = ['the package ships no types'];
    continue;
  }
  report[tarball] = analysis.problems
    .filter((problem) => !('resolutionKind' in problem && ignored.includes(problem.resolutionKind)))
    .map((problem) => {
      // The fields that say where differ by kind of problem: read whichever it has.
      const fields = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (problem));
      const where = [fields.entrypoint, fields.resolutionKind, fields.fileName ?? fields.typesFileName]
        .filter(Boolean)
        .join(', ');
      return `${problem.kind} (${where}): ${problemKindInfo[problem.kind].description}`;
    });
}
process.stdout.write(JSON.stringify(report));
