import { IdsError } from '@ids/engine';

// The engine's description of a received value, for messages; imported in this one place.
export { received } from '@ids/engine/internal';

/** Go: ErrNoPrivateAddress ("no private ip address"). */
export class NoPrivateAddressError extends IdsError {
  readonly code = 'ERR_IDS_NO_PRIVATE_ADDRESS';
  override readonly name = 'NoPrivateAddressError';
}

/** The host has no unique-local IPv6 address (fc00::/7) outside virtual bridges. */
export class NoUniqueLocalAddressError extends IdsError {
  readonly code = 'ERR_IDS_NO_UNIQUE_LOCAL_ADDRESS';
  override readonly name = 'NoUniqueLocalAddressError';
}

/** The address (or ordinal) gives a machine ID wider than the layout's machine field (Go issue #82). */
export class MachineIdDoesNotFitError extends IdsError {
  readonly code = 'ERR_IDS_MACHINE_ID_DOES_NOT_FIT';
  override readonly name = 'MachineIdDoesNotFitError';
}

/**
 * Listing the interfaces failed (Go passes the error of `net.InterfaceAddrs` through; `cause`
 * holds it), or an injected list is not the shape `os.networkInterfaces()` returns (the message
 * names the interface, the entry and the field).
 */
export class InterfaceListError extends IdsError {
  readonly code = 'ERR_IDS_INTERFACE_LIST';
  override readonly name = 'InterfaceListError';
}

/** The pod name carries no StatefulSet ordinal (and no pod index was given), or the pod index is malformed. */
export class NoPodOrdinalError extends IdsError {
  readonly code = 'ERR_IDS_NO_POD_ORDINAL';
  override readonly name = 'NoPodOrdinalError';
}

/** The instance metadata service refused the IMDSv2 token request or the token (an HTTP status other than 200). */
export class MetadataRefusedError extends IdsError {
  readonly code = 'ERR_IDS_METADATA_REFUSED';
  override readonly name = 'MetadataRefusedError';
}

/** The instance metadata service answered something that is not what IMDSv2 sends (an empty token, not a private IPv4). */
export class MetadataAnswerError extends IdsError {
  readonly code = 'ERR_IDS_METADATA_ANSWER';
  override readonly name = 'MetadataAnswerError';
}
