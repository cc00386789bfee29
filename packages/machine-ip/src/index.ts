// @ids/machine-ip: machine IDs from where the host sits: its private IPv4 address (Go's rule,
// with a tie-break for hosts that have several), a unique-local IPv6 address, a Kubernetes
// StatefulSet pod's ordinal, or an EC2 instance's private address from the metadata service.

// A metadata service that did not answer is the engine's one class for every store that did not
// (`store: 'ec2-metadata'`), passed on so that callers catch it without importing @ids/engine.
export { StoreUnavailableError } from '@ids/engine';
export {
  DEFAULT_EC2_TIMEOUT_MS,
  EC2_METADATA_ENDPOINT,
  type Ec2Options,
  ec2MachineId,
  ec2PrivateIPv4,
} from './ec2.js';
export {
  InterfaceListError,
  MachineIdDoesNotFitError,
  MetadataAnswerError,
  MetadataRefusedError,
  NoPodOrdinalError,
  NoPrivateAddressError,
  NoUniqueLocalAddressError,
} from './errors.js';
export {
  type AddressChoice,
  type AddressOptions,
  type Candidate,
  type InterfaceAddress,
  type InterfaceList,
  type InterfaceSource,
  isVirtualBridge,
} from './interfaces.js';
export {
  choosePrivateIPv4,
  ipv4MachineId,
  isPrivateIPv4,
  lower16BitPrivateIP,
  PRIVATE_IP_HINT,
  type PrivateIpOptions,
  privateIPv4,
  privateIpMachineId,
} from './ipv4.js';
export {
  chooseUniqueLocalIpv6,
  interfaceIdentifier,
  ipv6MachineId,
  uniqueLocalIpv6MachineId,
} from './ipv6.js';
export {
  checkOffset,
  type EnvSource,
  type KubernetesOrdinalOptions,
  kubernetesOrdinalMachineId,
  type PodOrdinal,
  podOrdinal,
} from './kubernetes.js';
export { defaultRouteInterfaces, procRoutes, type RouteFamily, type RouteSource } from './routes.js';
