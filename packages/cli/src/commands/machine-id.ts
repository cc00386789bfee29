import { HELP_WIDTH, wrapWords } from '@ids/engine/internal';
import { autoStepTable } from '@ids/machine-file';
import { type Command, defineCommand, type Flags, machineIdFor, OPTIONS } from '../command.js';
import { print } from '../io.js';
import { parseLayout } from '../layouts.js';

/** The help's lines for the stores of the chain, from its table: a store is one entry there. */
function storeLines(): string {
  const column = ' '.repeat(22);
  return autoStepTable()
    .filter((row) => row.env)
    .map((row) => {
      const text = `with ${row.env?.join(' or ')} set: an ID claimed there (${row.package})`;
      const [first, ...more] = wrapWords(text, HELP_WIDTH - column.length);
      return [`  ${row.title.padEnd(20)}${first}`, ...more.map((line) => column + line)].join('\n');
    })
    .concat(`${column}(ZooKeeper's also by --zookeeper); a store that fails stops the choice`)
    .join('\n');
}

const FLAGS = {
  layout: { ...OPTIONS.layout, help: "the layout, which gives the machine field's width" },
  'machine-id': OPTIONS['machine-id'],
  zookeeper: {
    type: 'string',
    value: 'ZK',
    help: 'a ZooKeeper to claim the ID in: host:port[,host:port...][/chroot]',
    env: 'IDS_ZOOKEEPER_CONNECT',
  },
  explain: { type: 'boolean', help: 'say which step produced the ID and why the earlier ones did not' },
  json: { ...OPTIONS.json, help: 'print a JSON object with the ID and the trail of steps' },
} as const satisfies Flags;

export const machineId: Command = defineCommand({
  name: 'machine-id',
  summary: 'print the machine ID the other commands would use (--explain: and why)',
  flags: FLAGS,
  usage: `Usage: ids machine-id [--layout SPEC] [--machine-id N] [--zookeeper ZK] [--explain] [--json]

Prints the machine ID \`ids generate\` would use. The steps, in order:
  --machine-id        the flag
  explicit ID         the IDS_MACHINE_ID environment variable
${storeLines()}
  Kubernetes ordinal  in Kubernetes (KUBERNETES_SERVICE_HOST set), a StatefulSet pod's ordinal
                      (IDS_POD_INDEX, else the number ending HOSTNAME) plus IDS_ORDINAL_OFFSET;
                      a name ending like a random pod suffix (node-agent-24657, a DaemonSet's
                      pod) gives none unless IDS_STATEFULSET names the set (node-agent)
  EC2 metadata        opt-in (IDS_AUTO_OPT_IN=ec2): the instance's private IPv4 from the
                      metadata service, IMDSv2 (IDS_EC2_ENDPOINT, IDS_EC2_TIMEOUT_MS)
  private IPv4        Go's rule: the low 16 bits of the host's private IPv4 address (virtual
                      bridges left out; of several, the one carrying the default route)
  unique-local IPv6   opt-in (IDS_AUTO_OPT_IN=ipv6-ula): the interface identifier of an
                      fc00::/7 address, when it fits the machine field
  host claim          the lowest ID no live process of this host holds, in IDS_CLAIM_DIR
                      (default ~/.local/state/ids/claims)
An ID derived from the host is held as a host claim, so that two processes of this host cannot
both use it; a bad value you set stops the choice. A claim taken here is released before the
command exits.`,
  positionals: false,
  async run({ values }, io) {
    const { label, layout } = parseLayout(values.layout ?? FLAGS.layout.byDefault);
    const auto = await machineIdFor(layout, values['machine-id'], io, values.zookeeper);
    // Only shown, not used: a claim taken to show it is given back at once.
    if (typeof auto.machineId !== 'number') await auto.machineId.release();
    if (values.json) {
      const json = {
        machineId: auto.id,
        step: auto.step,
        layout: label,
        bits: layout.machineBits,
        trail: auto.trail,
      };
      await print(io.stdout, `${JSON.stringify(json, null, 2)}\n`);
    } else if (values.explain) {
      const trail = auto.explain().replace(/^/gm, '    ');
      await print(
        io.stdout,
        `machine ID ${auto.id} for the ${label} layout (${layout.machineBits} machine bits), from ${auto.title}\n${trail}\n`,
      );
    } else {
      await print(io.stdout, `${auto.id}\n`);
    }
    return 0;
  },
});
