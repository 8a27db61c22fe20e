import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createFileRegistry, type DescService, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  type FileDescriptorSet,
} from "@bufbuild/protobuf/wkt";
import type { PackageDefinition } from "@grpc/proto-loader";

// ts-proto output carries no descriptors. `npm run generate` writes descriptor sets with buf (imports
// included): the contract, grpc.health.v1, and google.rpc. Reflection serves them (so grpcurl can show
// ErrorInfo details), and the request wire check reads field types from them.

let sets: FileDescriptorSet[] | null = null;

function descriptorSets(): FileDescriptorSet[] {
  if (sets) return sets;
  const dir = descriptorDir();
  sets = readdirSync(dir)
    .filter((name) => name.endsWith(".binpb"))
    .sort()
    .map((name) => fromBinary(FileDescriptorSetSchema, readFileSync(join(dir, name))));
  return sets;
}

/**
 * Every descriptor as the package definition @grpc/reflection takes. (A proto-loader package
 * definition would leave well-known types unresolvable, grpc/grpc-node#2958, and gives health an
 * invalid map entry.)
 */
export function reflectionPackage(): PackageDefinition {
  const files = new Map<string, Buffer>();
  for (const set of descriptorSets()) {
    for (const file of set.file) files.set(file.name, Buffer.from(toBinary(FileDescriptorProtoSchema, file)));
  }
  return {
    "taskplans.descriptors": { fileDescriptorProtos: [...files.values()] },
  } as unknown as PackageDefinition;
}

/** The descriptor of one of our services (its methods' input message types). */
export function serviceSchema(typeName: string): DescService {
  for (const set of descriptorSets()) {
    const service = createFileRegistry(set).getService(typeName);
    if (service) return service;
  }
  throw new Error(`${typeName} is not in generated/descriptors (npm run generate)`);
}

function descriptorDir(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, "generated", "descriptors");
    if (existsSync(join(candidate, "taskplans.binpb"))) return candidate;
  }
  throw new Error("generated/descriptors not found next to the service (npm run generate)");
}
