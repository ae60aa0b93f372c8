#!/usr/bin/env bash
# Fails when git tracks a compiled binary (ELF, Mach-O, PE, ar/Go archive, wasm) or a file over 1 MiB.
# Build outputs belong in bin/ (see .gitignore); generated files that must be committed and may grow large
# are listed below by name.
set -euo pipefail
cd "$(dirname "$0")/.."

# Generated and committed on purpose; allowed over the size limit.
allowed_large="catalog/operator101/index.yaml bundle/manifests/operator101.clusterserviceversion.yaml"

# One perl process reads every file's first bytes (a shell loop with head/od per file took 11 s).
git ls-files -z | ALLOWED="$allowed_large" perl -0 -ne '
	BEGIN { %ok = map { $_ => 1 } split " ", $ENV{ALLOWED}; $bad = 0 }
	chomp; my $f = $_;
	next if -l $f || ! -f $f;
	open(my $fh, "<:raw", $f) or die "$f: $!";
	read($fh, my $m, 8); close $fh;
	my $kind = $m =~ /^\x7fELF/ ? "ELF executable"
		: $m =~ /^(\xcf\xfa\xed\xfe|\xce\xfa\xed\xfe|\xfe\xed\xfa\xce|\xfe\xed\xfa\xcf|\xca\xfe\xba\xbe)/ ? "Mach-O executable"
		: $m =~ /^MZ/ ? "PE/Windows executable"
		: $m =~ /^!<arch>\n/ ? "ar archive (Go object or archive)"
		: $m =~ /^\x00asm/ ? "WebAssembly module" : "";
	if ($kind) { print "tracked compiled binary: $f ($kind); git rm --cached it and build into bin/\n"; $bad = 1; next }
	my $size = -s $f;
	if ($size > 1024 * 1024 && !$ok{$f}) {
		print "tracked file over 1 MiB: $f ($size bytes); large generated files are listed in hack/check-tracked-files.sh\n"; $bad = 1;
	}
	END { print "tracked files: no compiled binaries, none over 1 MiB but the listed generated ones\n" unless $bad; exit $bad }'
