# Set up ai-memory on Windows: create .venv, install, build the index of a memory root,
# prove the server answers, and optionally register the MCP clients (those found, or the
# ones named in -Clients; -Name registers a second root beside the first).
#   .\scripts\setup.ps1 -MemoryRoot 'C:\path\to\AI-Memory' -InstallClients
param(
    [string]$MemoryRoot = (Join-Path $HOME 'AI-Memory'),
    [switch]$InstallClients,
    [string]$Clients = '',
    [string]$Name = '',
    [switch]$DryRun,
    [switch]$Uninstall
)
$ErrorActionPreference = 'Stop'
Set-Location (Join-Path $PSScriptRoot '..')

$py = if (Get-Command py -ErrorAction SilentlyContinue) { 'py -3.11' } else { 'python' }
if (-not (Test-Path '.venv\Scripts\python.exe')) {
    Invoke-Expression "$py -m venv .venv"
}
$venvPy = '.venv\Scripts\python.exe'
# torch first and pinned: an unpinned torch pulls a multi-GB CUDA build.
& $venvPy -m pip install -q --upgrade pip
& $venvPy -m pip install -q 'torch==2.13.0'
& $venvPy -m pip install -q -e '.'
if ($LASTEXITCODE -ne 0) { throw 'installation failed' }

$env:HF_HUB_OFFLINE = '1'; $env:TRANSFORMERS_OFFLINE = '1'; $env:TOKENIZERS_PARALLELISM = 'false'
$setupArgs = @('setup', '--memory-root', $MemoryRoot)
if ($InstallClients) { $setupArgs += '--install-clients' }
if ($Clients) { $setupArgs += @('--clients', $Clients) }
if ($Name) { $setupArgs += @('--name', $Name) }
if ($DryRun) { $setupArgs += '--dry-run' }
if ($Uninstall) { $setupArgs += '--uninstall' }
& '.venv\Scripts\ai-memory.exe' @setupArgs
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
if (-not ($DryRun -or $Uninstall)) {
    Write-Host '== proving the MCP server answers (tools/list over stdio)'
    & $venvPy -m memory.entrypoints.probe --root $MemoryRoot
    exit $LASTEXITCODE
}
