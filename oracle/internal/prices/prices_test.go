package prices

import "testing"

func TestReadsTheRepositoryTable(t *testing.T) {
	path, err := DefaultPath(".")
	if err != nil {
		t.Fatal(err)
	}
	table, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	// us-east-1's rows only: c6i.large is cheaper than m5.large there.
	if table["c6i.large"] != 0.085 || table["m5.large"] != 0.096 {
		t.Errorf("c6i.large %v, m5.large %v", table["c6i.large"], table["m5.large"])
	}
}

func TestParseRejects(t *testing.T) {
	for _, b := range []string{
		"region,instance_type,price\nus-east-1,m5.large,0.096\n",
		"region,instance_type,price_per_hour,currency\nus-east-1,m5.large,x,USD\n",
		"region,instance_type,price_per_hour,currency\ncn-north-1,c3.large,1,CNY\n",
	} {
		if _, err := Parse([]byte(b)); err == nil {
			t.Errorf("%q: accepted", b)
		}
	}
}
