import type { VendoredAllowlist, VendoredRuleSet } from "./vendored-rule";

/**
 * Our own rules, for what gitleaks' default set does not cover (issue 61 asks for connection strings
 * with passwords; gitleaks finds them only when a `password=`-like key precedes them). Same format as
 * the vendored rules, same engine, same linear-time regexes (RE2).
 */
export const LOCAL_RULE_SET: VendoredRuleSet = {
  source: "taskplans",
  version: "1",
  allowlist: {},
  rules: [
    {
      id: "connection-string-password",
      description:
        "A URL or connection string with a password in it (scheme://user:password@host), which gives access to the database, broker or server it names.",
      // The scheme is a known one (databases, brokers, mail, directories, http); user and password
      // exclude what ends them in a URL. Every quantifier is bounded; RE2 runs it in linear time.
      regex:
        "(?i)\\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|oracle|cockroachdb|clickhouse|couchdb|neo4j(?:\\+s)?|nats|kafka|ldaps?|smtps?|imaps?|ftps?|sftp|ssh|https?)(?:\\+[a-z0-9]{1,20})?://[^:@/\\s'\"`<>]{1,128}:([^@/\\s'\"`<>]{3,256})@[a-z0-9_.\\[\\]-]{1,253}",
      keywords: ["://"],
      allowlists: [
        {
          // Placeholders in docs and config templates: ${VAR}, $VAR, <password>, {{ .Values.x }},
          // ***, xxx, %s, and the words people write instead of a password.
          regexes: [
            "^(?:\\$\\{?[\\w.:-]+\\}?|\\{\\{[^}]*\\}\\}|%[a-z]|\\*+|x+|\\.+|-+|_+)$",
            "(?i)^(?:pass(?:word|wd)?|pwd|secret|changeme|change_me|change-me|test|example|admin|root|user|guest|token|redacted)$",
          ],
        },
      ],
    },
  ],
};

/**
 * Applied to every rule, gitleaks' ones included: values that are documentation examples, not
 * credentials. A candidate whose secret contains one of these words (ASCII case-insensitive) is not a
 * finding, nor one that ends in an ellipsis: AWS's documented keys end in EXAMPLE / EXAMPLEKEY, jwt.io's sample token is signed
 * SflKxw..., and a random secret almost never spells a whole word (docs/secrets.md).
 */
export const HOUSE_ALLOWLIST: VendoredAllowlist = {
  // A value cut short for display ("eyJhbGciOi...", "sk-...") is a sample, not a credential.
  regexes: ["(?:\\.\\.\\.|\u2026)$"],
  stopwords: [
    "example",
    "sample",
    "placeholder",
    "redacted",
    "dummy",
    "xxxxxxxx",
    "sflkxwrjsmekkf2qt4fwpmejf36pok6yjv_adqssw5c",
  ],
};
