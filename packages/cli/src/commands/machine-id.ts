import { parseArgs } from 'node:util';
import { parseCommandLine } from '../args.js';
import { type Command, EXIT_HELP, LAYOUT_HELP, machineIdFor, OPTIONS } from '../command.js';
import { print } from '../io.js';
import { parseLayout } from '../layouts.js';
import { columns } from '../table.js';

export const machineId: Command = {
  name: 'machine-id',
  summary: 'print the machine ID the other commands would use (--explain: and why)',
  help: `Usage: ids machine-id [--layout SPEC] [--machine-id N] [--explain] [--json]

Prints the machine ID \`ids generate\` would use. The steps, in order: --machine-id, the
IDS_MACHINE_ID environment variable, the low 16 bits of the host's first private IPv4 address
(Go's rule; refused when it does not fit the layout's machine field, and held as a host claim so
that two processes of this host cannot both use it), else a host claim: the lowest ID no live
process of this host holds, in IDS_CLAIM_DIR (default ~/.local/state/ids/claims). A claim taken
here is released before the command exits.

Options:
${LAYOUT_HELP}
                        (default sonyflake; gives the machine field's width)
  -m, --machine-id N    an explicit machine ID
      --explain         say which step produced the ID and why the earlier ones did not
      --json            print a JSON object with the ID and every step
  -h, --help            this text

${EXIT_HELP}
`,
  async run(args, io) {
    const { values } = parseCommandLine(() =>
      parseArgs({
        args,
        options: {
          layout: OPTIONS.layout,
          'machine-id': OPTIONS['machine-id'],
          explain: { type: 'boolean' },
          json: OPTIONS.json,
        },
        allowPositionals: false,
        strict: true,
      }),
    );
    const { label, layout } = parseLayout(values.layout ?? 'sonyflake');
    const choice = await machineIdFor(layout, values['machine-id'], io);
    // Only shown, not used: a claim taken to show it is given back at once.
    if (typeof choice.source !== 'number') await choice.source.release();
    if (values.json) {
      const json = {
        machineId: choice.machineId,
        step: choice.step,
        layout: label,
        bits: layout.machineBits,
        steps: choice.steps,
      };
      await print(io.stdout, `${JSON.stringify(json, null, 2)}\n`);
    } else if (values.explain) {
      const steps = choice.steps.map((s, i) => [
        `${i + 1}. ${s.step}`,
        s.chosen ? `chosen: ${s.detail}` : s.detail,
      ]);
      await print(
        io.stdout,
        `machine ID ${choice.machineId} for the ${label} layout (${layout.machineBits} machine bits), from ${choice.step}\n${columns(steps.map((s) => ['  ', ...s]))}`,
      );
    } else {
      await print(io.stdout, `${choice.machineId}\n`);
    }
    return 0;
  },
};
