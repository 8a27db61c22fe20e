import { dirname, join } from "node:path";
import {
  type ChannelCredentials,
  type ChannelOptions,
  credentials,
  type Client,
  loadPackageDefinition,
  makeGenericClientConstructor,
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { service as healthService } from "grpc-health-check";

type AnyClient = Client & Record<string, (...args: unknown[]) => unknown>;

/** A grpc.health.v1.Health client (enums as strings). */
export function healthClient(
  port: number,
  host = "127.0.0.1",
  creds: ChannelCredentials = credentials.createInsecure(),
  channelOptions: ChannelOptions = {},
): AnyClient {
  const Health = makeGenericClientConstructor(healthService, "Health");
  return new Health(`${host}:${port}`, creds, channelOptions) as unknown as AnyClient;
}

/** Health Check of one service: "SERVING" or "NOT_SERVING". */
export function checkHealth(client: AnyClient, service = ""): Promise<string> {
  return new Promise((resolve, reject) =>
    client.Check?.({ service }, (error: Error | null, response: { status: string | number }) =>
      error ? reject(error) : resolve(String(response.status)),
    ),
  );
}

/** A grpc.reflection.v1 client. */
export function reflectionClient(
  port: number,
  creds: ChannelCredentials = credentials.createInsecure(),
): AnyClient {
  const reflectionRoot = join(dirname(require.resolve("@grpc/reflection/package.json")), "build", "proto");
  const definition = loadSync("grpc/reflection/v1/reflection.proto", { includeDirs: [reflectionRoot] });
  const loaded = loadPackageDefinition(definition) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: new (address: string, creds: unknown) => AnyClient } } };
  };
  return new loaded.grpc.reflection.v1.ServerReflection(`127.0.0.1:${port}`, creds);
}

/** The service names a server lists through reflection. */
export function listServices(client: AnyClient): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const stream = client.ServerReflectionInfo?.() as NodeJS.EventEmitter & {
      write(x: unknown): void;
      end(): void;
    };
    stream.on("data", (response: { listServicesResponse?: { service: { name: string }[] } }) => {
      resolve(response.listServicesResponse?.service.map((s) => s.name) ?? []);
      stream.end();
    });
    stream.on("error", reject);
    stream.write({ listServices: "*" });
  });
}

/** Asks reflection for a file by name; resolves the number of file descriptors returned (0 on error). */
export function fileByFilename(client: AnyClient, filename: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = client.ServerReflectionInfo?.() as NodeJS.EventEmitter & {
      write(x: unknown): void;
      end(): void;
    };
    stream.on("data", (response: { fileDescriptorResponse?: { fileDescriptorProto: Buffer[] } }) => {
      resolve(response.fileDescriptorResponse?.fileDescriptorProto.length ?? 0);
      stream.end();
    });
    stream.on("error", reject);
    stream.write({ fileByFilename: filename });
  });
}
