import { etcdMachineId } from '@ids/machine-etcd';
import { Sonyflake } from '@ids/sonyflake';

// etcd from ETCD_ENDPOINTS (else http://127.0.0.1:2379); claims live under /ids/machine-id.
const sonyflake = await Sonyflake.create({ machineId: etcdMachineId() });
console.log(`machine ${sonyflake.machine}: ${await sonyflake.nextId()}`);
await sonyflake.close(); // revokes the lease: the machine ID is free again at once
