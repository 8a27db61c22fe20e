package taskplans_test

import (
	"os"
	"testing"

	taskplans "github.com/taskplans/taskplans/clients/go"
)

func TestVersionIsTheOneInClientsVERSION(t *testing.T) {
	shared, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if want := string(shared); taskplans.Version+"\n" != want {
		t.Fatalf("Version = %q, clients/VERSION holds %q", taskplans.Version, want)
	}
}
