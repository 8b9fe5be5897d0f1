// Command gen-prices writes karplint's on-demand price table (data/prices/on-demand.csv) from
// the static prices Karpenter's AWS provider ships in its Go module.
//
// The prices are read through the provider's exported API, as the provider itself reads them
// when it has no live pricing: for every region that has a static table
// (pricing.InitialOnDemandPricesAWS, ...USGov, ...CN), a pricing.DefaultProvider is built with
// no pricing or EC2 client (its constructor loads the static table for the region, as at
// controller start-up), and OnDemandPrice is asked for every type in its InstanceTypes().
//
// Usage:
//
//	gen-prices [-date YYYY-MM-DD] [-out FILE]   write the table (default: stdout, today's date)
//
// scripts/gen-prices.sh runs it from the repository root.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/karpenter-provider-aws/pkg/providers/pricing"
)

// providerModule is the Go module the prices come from.
const providerModule = "github.com/aws/karpenter-provider-aws"

// row is one price: a region, an instance type, its on-demand price per hour and the currency.
type row struct {
	region, instanceType, currency string
	price                          float64
}

func main() {
	date := flag.String("date", time.Now().UTC().Format(time.DateOnly), "generation date written to the header (YYYY-MM-DD)")
	out := flag.String("out", "", "output file (default: stdout)")
	flag.Parse()
	if err := run(*date, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen-prices:", err)
		os.Exit(1)
	}
}

// run renders the table and writes it to out ("" is stdout).
func run(date, out string) error {
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return fmt.Errorf("-date %q is not YYYY-MM-DD", date)
	}
	version, err := providerVersion()
	if err != nil {
		return err
	}
	rows, err := collect()
	if err != nil {
		return err
	}
	if out == "" {
		return render(os.Stdout, version, date, rows)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := render(f, version, date, rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// providerVersion is the version of the provider module linked into this binary.
func providerVersion() (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", errors.New("no build information in the binary")
	}
	for _, dep := range info.Deps {
		if dep.Path == providerModule {
			if dep.Replace != nil {
				return "", fmt.Errorf("%s is replaced by %s: the table must come from a released version", providerModule, dep.Replace.Path)
			}
			return dep.Version, nil
		}
	}
	return "", fmt.Errorf("%s is not a dependency of this binary", providerModule)
}

// regions are the regions with a static price table, sorted.
func regions() []string {
	var out []string
	for _, table := range []map[string]map[ec2types.InstanceType]float64{
		pricing.InitialOnDemandPricesAWS,
		pricing.InitialOnDemandPricesUSGov,
		pricing.InitialOnDemandPricesCN,
	} {
		for region := range table {
			out = append(out, region)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// collect asks a fresh pricing provider per region for every instance type it prices.
func collect() ([]row, error) {
	var rows []row
	for _, region := range regions() {
		regionRows, err := regionPrices(region)
		if err != nil {
			return nil, err
		}
		rows = append(rows, regionRows...)
	}
	if len(rows) == 0 {
		return nil, errors.New("the provider has no static on-demand prices")
	}
	return rows, nil
}

// regionPrices are one region's prices, sorted by instance type. The provider is built as
// the controller builds it in an isolated VPC: no pricing or EC2 client, static prices only.
func regionPrices(region string) ([]row, error) {
	provider := pricing.NewDefaultProvider(nil, nil, region, true)
	types := provider.InstanceTypes()
	slices.Sort(types)
	rows := make([]row, 0, len(types))
	for _, it := range types {
		price, ok := provider.OnDemandPrice(it)
		if !ok {
			return nil, fmt.Errorf("%s: %s is listed but has no on-demand price", region, it)
		}
		if price <= 0 {
			return nil, fmt.Errorf("%s: %s has on-demand price %v", region, it, price)
		}
		rows = append(rows, row{region: region, instanceType: string(it), currency: currency(region), price: price})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: the provider prices no instance type", region)
	}
	return rows, nil
}

// currency is the currency of a region's prices: the provider reads the pricing API's "CNY"
// price in cn- regions and "USD" elsewhere (pricing.go, onDemandPage).
func currency(region string) string {
	if strings.HasPrefix(region, "cn-") {
		return "CNY"
	}
	return "USD"
}

// render writes the header and the rows as CSV. Prices are the shortest decimal that parses
// back to the provider's float64.
func render(w io.Writer, version, date string, rows []row) error {
	b := bufio.NewWriter(w)
	fmt.Fprintln(b, "# karplint on-demand price table: the static prices Karpenter's AWS provider uses when it has no live pricing.")
	fmt.Fprintln(b, "# GENERATED by scripts/gen-prices.sh (tools/gen-prices); do not edit by hand.")
	fmt.Fprintf(b, "# provider: %s %s\n", providerModule, version)
	fmt.Fprintf(b, "# date: %s\n", date)
	fmt.Fprintln(b, "# price_per_hour is in currency (the provider's CNY for cn- regions, USD elsewhere).")
	fmt.Fprintln(b, "region,instance_type,price_per_hour,currency")
	for _, r := range rows {
		fmt.Fprintf(b, "%s,%s,%s,%s\n", r.region, r.instanceType, strconv.FormatFloat(r.price, 'f', -1, 64), r.currency)
	}
	return b.Flush()
}
