; Inno Setup 6 script: the Windows installer around the PyInstaller one-folder build.
;   iscc /DAppVersion=0.1.0 packaging\windows\sessionscope.iss      (after pyinstaller and packaging/icons.py)
; Input: dist\sessionscope\ (sessionscope.exe for the command line, sessionscopew.exe windowed, _internal\)
; and build\icons\sessionscope.ico.  Output: dist\SessionScope-<version>-windows-x64-setup.exe.
; Per-user install by default (no administrator prompt); the user may choose all users.
; Built and run only by .github/workflows/release.yml: nothing here is exercised on Linux.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif

[Setup]
; The AppId identifies the product across versions (upgrades, uninstall): never change it.
AppId={{FC84EAEA-E0AB-498A-9695-1B73ED7934DE}
AppName=SessionScope
AppVersion={#AppVersion}
AppVerName=SessionScope {#AppVersion}
AppPublisher=The SessionScope developers
DefaultDirName={autopf}\SessionScope
DefaultGroupName=SessionScope
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=SessionScope-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\build\icons\sessionscope.ico
UninstallDisplayIcon={app}\sessionscopew.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "..\..\dist\sessionscope\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\SessionScope"; Filename: "{app}\sessionscopew.exe"
Name: "{autodesktop}\SessionScope"; Filename: "{app}\sessionscopew.exe"; Tasks: desktopicon

[Registry]
; sessionscope://open?root=...&session=...&seq=N links (app/links.py): the URL is the only argument.
; HKA is HKCU for a per-user install and HKLM for an all-users one.
Root: HKA; Subkey: "Software\Classes\sessionscope"; ValueType: string; ValueName: ""; ValueData: "URL:SessionScope link"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\sessionscope"; ValueType: string; ValueName: "URL Protocol"; ValueData: ""
Root: HKA; Subkey: "Software\Classes\sessionscope\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\sessionscopew.exe,0"
Root: HKA; Subkey: "Software\Classes\sessionscope\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\sessionscopew.exe"" ""%1"""

[Run]
Filename: "{app}\sessionscopew.exe"; Description: "{cm:LaunchProgram,SessionScope}"; Flags: nowait postinstall skipifsilent
