import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { create, createFileRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import pino from "pino";
import { receivingRaw } from "../../src/grpc/wire/received-request";
import { MAX_MESSAGE_BYTES } from "../../src/grpc/server";
import { connectHandler } from "../../src/http/connect-handler";
import { doorProtocols } from "../../src/http/http-listener";
import { conformanceService } from "./conformance-handlers";

// The conformance server that connectconformance (Connect's conformance runner, `--mode server`)
// starts: connectrpc.conformance.v1.ConformanceService mounted on the HTTP door's own request
// handling (src/http/connect-handler.ts: the direct paths for Connect's plain unary calls and server
// streams, Connect's router for the rest), with the door's protocols and settings (doorProtocols),
// over node:http or node:https as the door serves. It reads a size-delimited ServerCompatRequest on
// stdin, answers a ServerCompatResponse on stdout, and serves until SIGTERM.
// test/integration/doors/connect-conformance.test.ts bundles and runs it; docs/testing.md.

const PACKAGE = "connectrpc.conformance.v1";

async function readDelimited(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    const all = Buffer.concat(chunks);
    if (all.length >= 4 && all.length >= 4 + all.readUInt32BE(0))
      return all.subarray(4, 4 + all.readUInt32BE(0));
  }
  throw new Error("stdin ended before a whole ServerCompatRequest");
}

function writeDelimited(bytes: Uint8Array): void {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(bytes.byteLength);
  process.stdout.write(Buffer.concat([prefix, bytes]));
}

async function main(): Promise<void> {
  const descriptors = process.env.CONFORMANCE_DESCRIPTORS;
  if (!descriptors)
    throw new Error("CONFORMANCE_DESCRIPTORS names no descriptor set of the conformance protos");
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(descriptors)));
  const requestDesc = registry.getMessage(`${PACKAGE}.ServerCompatRequest`);
  const responseDesc = registry.getMessage(`${PACKAGE}.ServerCompatResponse`);
  if (!requestDesc || !responseDesc) throw new Error("the descriptor set lacks ServerCompatRequest/Response");
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a message read from descriptors
  const request = fromBinary(requestDesc, await readDelimited()) as any;

  const { service, definition, handlers } = conformanceService(registry);
  const logger = pino({ level: process.env.CONFORMANCE_LOG_LEVEL ?? "silent" }, pino.destination(2));
  const limit = Number(request.messageReceiveLimit);
  const serve = connectHandler({
    logger,
    services: [{ service, definition: receivingRaw(definition, service), handlers }],
    ...doorProtocols(limit > 0 ? limit : MAX_MESSAGE_BYTES, registry),
  });
  const handle = (req: IncomingMessage, res: ServerResponse) => serve(req, res);
  const clientCa = request.clientTlsCert as Uint8Array;
  const server = request.useTls
    ? createHttpsServer(
        {
          cert: Buffer.from(request.serverCreds.cert as Uint8Array),
          key: Buffer.from(request.serverCreds.key as Uint8Array),
          ...(clientCa.length > 0
            ? { ca: Buffer.from(clientCa), requestCert: true, rejectUnauthorized: true }
            : {}),
        },
        handle,
      )
    : createHttpServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  writeDelimited(
    toBinary(
      responseDesc,
      create(responseDesc, {
        host: "127.0.0.1",
        port,
        pemCert: request.useTls ? (request.serverCreds.cert as Uint8Array) : new Uint8Array(),
      } as never),
    ),
  );
  process.once("SIGTERM", () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `conformance server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
