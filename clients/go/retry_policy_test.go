package taskplans

import (
	"testing"
	"time"
)

func TestEachDelayIsTheCappedBackoffTimesAJitterFactorInRange(t *testing.T) {
	policy := DefaultRetryPolicy()
	bases := []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000} // ms; capped at 5 s
	for i, base := range bases {
		base *= time.Millisecond
		low, high := base, base
		for range 2000 {
			d := policy.delay(i+1, nil)
			if d < base*8/10 || d > base*12/10 {
				t.Fatalf("delay after %d failures = %v, want within [0.8, 1.2] x %v", i+1, d, base)
			}
			low, high = min(low, d), max(high, d)
		}
		if low > base*85/100 || high < base*115/100 {
			t.Fatalf("delays after %d failures span only [%v, %v]: no jitter", i+1, low, high)
		}
	}
}

func TestADelayIsAtLeastTheRetryInfoDelay(t *testing.T) {
	policy := DefaultRetryPolicy()
	if d := policy.delay(1, &Error{RetryDelay: 3 * time.Second, HasRetryDelay: true}); d != 3*time.Second {
		t.Fatalf("delay = %v, want RetryInfo's 3 s", d)
	}
	if d := policy.delay(1, &Error{RetryDelay: time.Millisecond, HasRetryDelay: true}); d < 80*time.Millisecond {
		t.Fatalf("delay = %v, want the backoff (a shorter RetryInfo does not shorten it)", d)
	}
}

func TestZeroFieldsOfAPolicyTakeTheDefaults(t *testing.T) {
	got := RetryPolicy{MaxAttempts: 3, Jitter: -1}.withDefaults()
	want := DefaultRetryPolicy()
	want.MaxAttempts, want.Jitter = 3, 0
	if got != want {
		t.Fatalf("policy %+v, want %+v", got, want)
	}
	if d := got.delay(2, nil); d != 200*time.Millisecond {
		t.Fatalf("delay without jitter = %v, want 200 ms", d)
	}
}
