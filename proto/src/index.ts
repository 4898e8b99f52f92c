/** Loads the hub <-> gateway contract (`devicelab_link.proto`) for @grpc/grpc-js. */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const LINK_PROTO_PATH = path.join(__dirname, '..', 'devicelab_link.proto');

const definition = protoLoader.loadSync(LINK_PROTO_PATH, {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});

const loaded = grpc.loadPackageDefinition(definition) as unknown as {
  devicelab: { link: { v1: { GatewayLink: grpc.ServiceClientConstructor } } };
};

/** Client constructor (gateway side) and service definition (hub side). */
export const GatewayLinkClient = loaded.devicelab.link.v1.GatewayLink;
export const gatewayLinkService = GatewayLinkClient.service;

export * from './messages';
export * from './device-ticket';
export * from './message-handlers';
