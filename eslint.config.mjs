import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "generated/", "node_modules/", "var/", "coverage/", "*.js", "*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["../generated/*", "../../generated/*"], message: "only src/grpc and tests use generated code" }] },
      ],
    },
  },
  {
    files: ["src/plans/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { paths: ["typeorm", "@grpc/grpc-js", "ioredis", "redlock"], patterns: ["**/grpc/*", "**/generated/*"] },
      ],
    },
  },
  {
    files: ["src/storage/**/*.ts", "src/locking/**/*.ts", "src/auth/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: ["@grpc/grpc-js"], patterns: ["**/grpc/*", "**/plans/*", "**/generated/*"] }] },
  },
);
