package taskplans

// Version is this module's version, the one in clients/VERSION that every client package shares.
// Its tag is clients/go/v<Version>.
const Version = "0.2.0"
